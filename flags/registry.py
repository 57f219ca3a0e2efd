"""The flags the code knows, with their global defaults. A flag missing from the table resolves to its default."""

from __future__ import annotations

PROMPT_ASSEMBLER_ENABLED = "prompt_assembler_enabled"

KNOWN_FLAGS: dict[str, tuple[bool, str]] = {
    # seed 004: route prompt assembly through the layered assembler; default OFF = legacy prompt, byte-identical.
    PROMPT_ASSEMBLER_ENABLED: (False, "P3.1 layered prompt assembler (seed 004)."),
}
