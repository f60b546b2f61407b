"""JSON output: plain types only (numpy scalars converted, inf/NaN become null)."""

from __future__ import annotations

import json
import math

import numpy as np


def plain(value: object) -> object:
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return value


def dumps(value: object) -> str:
    return json.dumps(plain(value), indent=2)
