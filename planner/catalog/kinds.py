"""The catalog kinds and schema version: light constants the CLI needs before anything heavy is imported
(planner.catalog.rows defines a row type per kind and checks it matches)."""

SCHEMA_VERSION = 3
KINDS: tuple[str, ...] = ("gpus", "servers", "nics", "switches", "optics", "nvme", "cloud", "models", "infra")
