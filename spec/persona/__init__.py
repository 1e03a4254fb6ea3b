# SPDX-License-Identifier: BSD-2-Clause
"""Drive personas: what a drive is built of, loaded from `personas/<name>.yaml` and checked.

- `load_persona(name_or_path) -> Persona`: a shipped persona by name (`intel-750-400g`) or a
  YAML file by path. A bad file raises `PersonaError`, whose message names the file, the field
  path and the legal range or choices, e.g.
  "personas/x.yaml: controller.channels = 40: out of range 1..64". Unknown and missing fields
  are errors too; every error of a file is reported at once.
- `Persona`: the validated inputs as dataclasses, NAND parts resolved from
  `spec/nand_geometry.PARTS`, plus derived values: die count, raw and user
  capacity, over-provisioning, analytic flash-array and channel-bus limits, host link rate.
- `Persona.scaled(capacity_factor=F | blocks_per_plane=N)`: the same drive with fewer blocks
  per plane; per-die geometry, timings and the channel/way topology stay; `Persona.scale`
  records it and `scale_note` says it in words for every report.
- `SCHEMA`: every field, its type, unit and range (personas/README.md prints it).
- `analytic_limits()`: pages per second one ONFI SDR channel sustains (bus-cycle costs of the
  engine's timing registers plus array times), used by
  tests/nand/nand_backend/test_nand_backend_array.py.

The modules: `schema` (the file format, its checker, `PersonaError`), `model` (the dataclasses
and the loader), `limits` (the analytic performance model). The mapping of a persona to the
RTL cores' parameters is `soc/persona_params.py` (`rtl_params`), above the RTL it describes.
"""

from spec.persona.limits import (
    PCIE_LANE_MB_S,
    analytic_limits,
    analytic_limits_nvddr2,
    flash_limits,
)
from spec.persona.model import (
    DEFAULT_PERSONA,
    PERSONA_DIR,
    Assumption,
    Controller,
    DieGroup,
    Dram,
    Ecc,
    Endurance,
    Host,
    Onfi,
    Parity,
    Persona,
    Scale,
    SlcCache,
    display_path,
    idema_lba_count,
    load_persona,
    persona_names,
    persona_path,
)
from spec.persona.schema import (
    DERIVED_SCHEMA,
    SCHEMA,
    SCHEMA_VERSION,
    F,
    PersonaError,
    schema_markdown,
)

__all__ = ["load_persona", "persona_names", "persona_path", "Persona", "PersonaError", "SCHEMA",
           "Scale", "analytic_limits", "analytic_limits_nvddr2", "schema_markdown",
           "PERSONA_DIR", "DEFAULT_PERSONA", "display_path", "idema_lba_count",
           "DERIVED_SCHEMA", "SCHEMA_VERSION", "F", "Host", "Onfi", "Controller", "DieGroup",
           "Dram", "SlcCache", "Ecc", "Parity", "Endurance", "Assumption", "flash_limits",
           "PCIE_LANE_MB_S"]
