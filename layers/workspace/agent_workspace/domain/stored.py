"""How the domain's entities are stored: each field under its camelCase name, read by either name (the stores map
them generically, `store/`). Its own module, so a rule module that declares an entity needs no other's."""

from pydantic import ConfigDict
from pydantic.alias_generators import to_camel

STORED = ConfigDict(alias_generator=to_camel, validate_by_name=True, validate_by_alias=True)
