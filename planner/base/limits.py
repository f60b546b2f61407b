"""Every limit on input size, structure and range, in one place (README: "Limits").

Inputs come from files a person edits, vendors send or a script generates; some are hostile. Each limit
is far above any real planning input and low enough that every command still ends in seconds and well
under 2 GiB, with a one-line message naming the file, field and limit instead of a hang or a traceback.
"""

from __future__ import annotations

MIB = 1 << 20

# -- file sizes, checked before a byte is parsed
MAX_SCENARIO_BYTES = 1 * MIB  # a scenario is a page of YAML
MAX_TRACE_BYTES = 64 * MIB  # a serving trace (planner serve --trace): ~2M requests of two numbers
MAX_TRACE_ROWS = 2_000_000
MAX_CALIBRATION_BYTES = 4 * MIB  # `planner calibrate` writes a few KiB
MAX_CATALOG_BYTES = 64 * MIB  # one catalog CSV or XLSX file (the shipped ones are ~100 KiB)
MAX_MEASUREMENTS_BYTES = 8 * MIB  # one measurements CSV for `planner calibrate`

# -- XLSX catalogs, checked on the zip directory before openpyxl opens it (defusedxml covers entities only)
MAX_XLSX_MEMBERS = 1_000
MAX_XLSX_UNCOMPRESSED_BYTES = 4 * MIB  # all members, as declared by the zip directory: openpyxl parses ~1 MiB/s

# -- tables (CSV files and XLSX sheets)
MAX_TABLE_ROWS = 200_000  # a 100k-row catalog validates in a few seconds; twice that is the cap
MAX_TABLE_COLUMNS = 256  # the widest catalog kind has under 25 columns
MAX_CELL_CHARS = 32_767  # Excel's own limit for one cell
MAX_MEASUREMENT_ROWS = 2_000  # `planner calibrate` points: ~3 ms each to tabulate when every workload differs
MAX_MEASUREMENT_SOURCES = 64  # source groups in one calibrate/validate: each is one more fit (~2 s) to validate
MAX_LOG_RESIDUAL = 5.0  # a calibration's uncertainty quantiles, log(predicted/measured): a factor of ~150

# -- YAML and JSON structure (scenario, calibration, --set values)
MAX_DOCUMENT_NODES = 10_000  # values after alias expansion (a scenario has ~50): an alias bomb is refused
MAX_NESTING_DEPTH = 32  # scenarios nest 3 deep; also the most dotted parts of a --set KEY

# -- numbers
MAX_QUANTITY_CHARS = 100  # "176B", "$36,000": longer text is not a quantity (and regexes stay linear)
MAX_COUNT = 10**15  # any whole number: exact as a float and within a C long
# the largest value of each dimension a quantity field or option accepts, in its canonical unit (a field may
# say less)
MAX_QUANTITY = {
    "count": 1e18,  # tokens to train
    "gbps": 1e7,
    "gb_per_s": 1e7,
    "gib": 1e9,
    "usd": 1e13,
    "w": 1e10,
    "s": 1e9,
    "days": 1e5,
    "tflops": 1e7,
}
MAX_GPUS = 10_000_000  # requirement.gpus
MAX_NODES = 100_000  # constraints.max_nodes
MAX_GPUS_PER_NODE = 1_024  # a server, rack-scale system, cloud instance or allowed node size
MAX_HOSTS_PER_NODE = 256  # hosts (compute trays) in one unit of a server row: 18 on an NVL72
MAX_NICS_PER_HOST = 64  # servers.max_nics_per_host and constraints.max_nics_per_host
MAX_NICS_PER_NODE = 1_024  # a node of many hosts (predict, an installed fleet node): an NVL72 has 72
MAX_RACKS_PER_NODE = 16  # racks one rack-scale system comes as (GB200 NVL36x2: 2)
MAX_WORKLOADS = 100  # a fleet's training jobs plus inference services: each adds columns per pool and period
MAX_INSTANCES = 10_000  # cloud.max_instances and each cloud.quota entry
MAX_ALTERNATIVES = 20  # --alternatives: each is one more MILP solve
MAX_SOLVER_THREADS = 256  # --threads (CBC fails to start with thousands)
MAX_MICRO_BATCH = 1_000_000  # sequences per GPU per micro-step (scenario, measurements, predict options)
MAX_SEQ_LEN = 10_000_000  # tokens per sequence (a training sequence, a served request's input or output)
MAX_REQUESTS_PER_S = 1e7  # a serving load (planner serve --rate, load.rate_per_s)
MAX_LENGTH_CV = 4.0  # served request lengths' standard deviation / mean (--input-cv, --output-cv, a trace's)
MAX_TOKENS_PER_GPU = 1e12  # tokens per GPU per micro-step (--tokens-per-gpu, a measurement's tokens_per_gpu)
MAX_GRAD_ACCUM = 1_000_000  # micro-steps per optimizer step (--grad-accum, a measurement's grad_accum)
MAX_SEARCH_PAIRS = 16  # allowed micro-batches x oversubscription ratios: each pair multiplies the plan's search
MAX_PARAMS = 1e15  # model parameters
MAX_YEARS = 50.0  # objective.years
MAX_USD_PER_KWH = 10.0  # objective.usd_per_kwh
MAX_PUE = 10.0  # objective.pue
MAX_OVERSUBSCRIPTION = 64.0
MAX_REACH_M = 100_000.0  # cabling reaches, and a cable's orderable lengths
MAX_USD_PER_KW_MONTH = 10_000.0  # objective.colocation_usd_per_kw_month (wholesale colocation: ~$150-200)
MAX_STAFF_FTE = 100_000.0  # objective.staff_fte
MAX_USD_PER_FTE_YEAR = 100_000_000.0  # objective.staff_usd_per_fte_year
MAX_RACK_KW = 1_000.0  # layout.rack_kw (the densest racks draw ~130 kW)
MAX_RACK_UNITS = 100  # layout.rack_units and reserved_units (racks are 42-58 U)
MAX_RACKS_PER_ROW = 1_000  # layout.racks_per_row
MAX_LAYOUT_M = 1_000.0  # layout.rack_width_m, row_pitch_m and slack_m
MAX_EVENTS_PER_1000_DAYS = 1_000_000.0  # reliability interruptions and cloud spot preemptions per 1000 days
MAX_EVENTS_PER_UNIT_DAY = 1_000.0  # reliability.failure_rates (a GPU: 3.5e-4)
MAX_MINUTES = 1_000_000.0  # restart and checkpoint-interval minutes (about two years)
MAX_CHECKPOINT_BYTES_PER_PARAM = 1_000.0  # reliability.checkpoint_bytes_per_param (bf16 + fp32 Adam: 14)
MAX_LIST_ITEMS = 1_000  # any list in a scenario
MAX_NAME_CHARS = 1_000  # a scenario name or any other scenario text

# -- error output
MAX_ERROR_LINES = 20  # then "... and N more problems"
MAX_VALUE_CHARS = 80  # a value quoted in a message is cut to this many characters
MAX_LINE_CHARS = 500  # one message line
MAX_ERROR_BYTES = 1_600  # all the lines of one error printed together (a few more say how many were left out)


def cut(text: str, limit: int = MAX_LINE_CHARS) -> str:
    """text, or its first limit characters and an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def short(value: object, limit: int = MAX_VALUE_CHARS) -> str:
    """repr(value) cut to limit characters with an ellipsis, for messages. Never formats a huge value
    whole: containers and long strings are cut before repr sees all of them."""
    if isinstance(value, str) and len(value) > limit:
        return repr(value[:limit]) + f"… ({len(value):,} characters)"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return f"an integer of about {int(value.bit_length() * 0.30103):,} digits"
    if isinstance(value, list | tuple | dict | set) and len(value) > limit:
        return f"a {type(value).__name__} of {len(value):,} items"
    text = _bounded_repr(value, limit)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _bounded_repr(value: object, limit: int) -> str:
    """repr of a container whose items may themselves be large (aliases share them): each item cut."""
    if isinstance(value, list | tuple):
        inner = []
        for item in value:
            inner.append(short(item, limit))
            if sum(map(len, inner)) > limit:
                break
        return "[" + ", ".join(inner) + "]"
    if isinstance(value, dict):
        inner = []
        for key, item in value.items():
            inner.append(f"{short(key, limit)}: {short(item, limit)}")
            if sum(map(len, inner)) > limit:
                break
        return "{" + ", ".join(inner) + "}"
    return repr(value)
