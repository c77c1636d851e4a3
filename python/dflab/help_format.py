"""One correction to how typer renders `--help`.

typer's rich help prints a value type beside every option, flags included (`--json <bool>`,
`--help <bool>`), which reads as if they took a value. A flag takes none, so its type column is
left empty. typer offers no setting for this (its plain help does it right but breaks pattern
names such as `router-mix:...` at their hyphen), hence this patch of the one method, applied
once by `install`; tests/python/test_cli_help.py checks the rendered help, so a typer upgrade
that changes the method is caught.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperOption

_installed = False


def install() -> None:
    """Render flags without a value type in every dflab command's help."""
    global _installed
    if _installed:
        return
    shown = TyperOption.display_type_rich

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        return None if self.is_flag else shown(self, ctx)

    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]
    _installed = True
