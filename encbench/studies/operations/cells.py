"""Which operations cells a profile asks for: one per operation, and encrypting existing
data once per number of encryption threads."""

from __future__ import annotations

from encbench.profiles.profile import Profile
from encbench.studies.operations.options import operations_options
from encbench.studies.operations.records import OperationCell


def cells(profile: Profile) -> list[OperationCell]:
    """The operations study's cells, in the profile's order (none when it does not run)."""
    if "operations" not in profile.studies:
        return []
    out: list[OperationCell] = []
    for operation in operations_options(profile).operations:
        if operation == "encrypt-existing":
            out += [
                OperationCell(operation, n) for n in operations_options(profile).encryption_threads
            ]
        else:
            out.append(OperationCell(operation))
    return out
