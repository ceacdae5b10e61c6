"""The embedded local stack behind `make serve`: moto on loopback, resources made from template.yaml."""
