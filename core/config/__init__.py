"""The configuration file: one YAML document validated at start-up, its source positions (so
errors name file, line and field), ``${ENV}`` references, and role bindings."""

from core.config.core_config import (
    CoreConfig,
    DeliberationConfig,
    PerceptionConfig,
    SessionsConfig,
    StoreConfig,
    config_path,
    load_config,
)
from core.config.env_refs import EnvRef, resolve_env_refs
from core.config.roles import RoleBinding, roles_for
from core.config.yaml_source import Located, field_path, load_located

__all__ = [
    "CoreConfig",
    "DeliberationConfig",
    "EnvRef",
    "Located",
    "PerceptionConfig",
    "RoleBinding",
    "SessionsConfig",
    "StoreConfig",
    "config_path",
    "field_path",
    "load_config",
    "load_located",
    "resolve_env_refs",
    "roles_for",
]
