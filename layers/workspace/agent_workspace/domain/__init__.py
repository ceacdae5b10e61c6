"""Entities, typed errors and rules; nothing here touches AWS."""
