"""Use cases: what a tool action or a REST route does, in terms of domain objects and stores."""
