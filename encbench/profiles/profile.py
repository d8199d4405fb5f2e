"""Profiles: what a study measures, as a TOML file validated field by field.

Built-in profiles live in encbench/profiles/builtin/*.toml; a user may pass a path instead.  Unknown
keys are refused (a typo must not silently fall back to a default), types are strict (`"4"` is
not 4, `true` is not 1, `nan` is no number), a list never names a value twice, and every error
is one line that names the key and the fix (options.py).

This module holds what every study shares: the profile's name, its studies, the data, the
servers' configuration, the regime and a target.  Each study's own settings are its section
(`studies/<name>/options.py`), which the studies register here (`register_studies`); parse
reads a profile with every registered section, each section left out taking its defaults.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, ClassVar, Protocol, Self, TypeVar, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    Field,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from encbench.capacity.plan import FINGERPRINT_REPEATS
from encbench.errors import BadInput
from encbench.profiles.options import (
    AcrossKeys,
    DataSpec,
    Strict,
    all_known,
    first_error,
    one_known,
    toml_value,
)
from encbench.servers import fscrypt, server_kind, shapes
from encbench.servers.mariadb import installs
from encbench.servers.target import Connection
from encbench.servers.variants import Against, Algorithm, KeyProvider, Layer, Scope

DEFAULT_PROFILE = "quick"
SectionModel = TypeVar("SectionModel", bound=BaseModel)

# The name becomes a directory, results/{name}-{stamp}: nothing that could leave results/.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
NAME_CHARACTERS = "letters, digits, '.', '_' and '-' (starting with a letter or digit, at most 64)"


SHAPE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}")


class ShapeSpec(Strict):
    """One instance shape (`[[server.shapes]]`): the CPUs, memory and IOPS a study's servers
    may use, enforced by cgroups (servers/shapes.py).  Every cell is measured once per shape."""

    name: str  # names its cells and report rows, e.g. "1cpu"
    cpus: Annotated[int, Field(gt=0, le=4096)]  # a cpuset of this many CPUs
    # CPUs' worth of CPU time per 100 ms period (CFS quota), e.g. 0.5 or 1.5; none: no quota.
    cpu_quota: float | None = None
    memory_mib: Annotated[int, Field(gt=0)] | None = None  # the server's memory limit
    # Reads and writes per second, each, that the server may submit to the disk holding its
    # data directory (a cloud volume's IOPS cap); the kernel takes at most 2^32 - 1.
    iops: Annotated[int, Field(gt=0, lt=2**32)] | None = None

    @field_validator("name")
    @classmethod
    def short_name(cls, value: str) -> str:
        if not SHAPE_NAME.fullmatch(value):
            raise ValueError(
                f"{toml_value(value)} cannot name a shape; use letters, digits, '.', '_' and "
                "'-' (starting with a letter or digit, at most 32), e.g. \"1cpu\""
            )
        return value

    @field_validator("cpu_quota")
    @classmethod
    def positive_quota(cls, value: float | None) -> float | None:
        if value is not None and value < shapes.MIN_CPU_QUOTA:
            raise ValueError(
                f"{value:g} is no CPU budget: give the CPUs' worth of time the server may use "
                f"per period, at least {shapes.MIN_CPU_QUOTA:g} (e.g. 1.5), or leave it out"
            )
        return value

    @property
    def memory_words(self) -> str:
        return f", {self.memory_mib:,} MiB" if self.memory_mib is not None else ""

    @property
    def words(self) -> str:
        """The shape as the report names it: "1cpu (1 CPU, quota 0.5 CPU, 512 MiB, 7,000
        IOPS)"."""
        quota = f", quota {self.cpu_quota:g} CPU" if self.cpu_quota is not None else ""
        cpus = f"{self.cpus} CPU{'s' if self.cpus > 1 else ''}"
        iops = f", {self.iops:,} IOPS" if self.iops is not None else ""
        return f"{self.name} ({cpus}{quota}{self.memory_words}{iops})"


class ServerSpec(Strict):
    """The encrypted server's configuration.  One value (`encryption_scope = "all"`) fixes it
    for the whole run, as always; a list (`encryption_scope = ["tables", "all"]`) makes it a
    dimension of the study: every cell is measured once per value (per combination, with
    both keys listed), each on a freshly provisioned and proven pair of servers."""

    encryption_algorithm: Annotated[list[Algorithm], Field(min_length=1)] = ["AES_CTR"]
    encryption_scope: Annotated[list[Scope], Field(min_length=1)] = ["tables"]
    # Where the encrypted side encrypts: "tde" (InnoDB's own encryption, as always), "fs"
    # (its data directory on an fscrypt-encrypted ext4, servers/fscrypt.py) or "tde+fs".
    # With any fs layer, both servers of every configuration run on loop-mounted ext4
    # images alike; plain is the baseline of each.
    encryption_layer: Annotated[list[Layer], Field(min_length=1)] = ["tde"]
    # What each encrypted configuration is measured against: "plain" (as always), and/or
    # "tables" — scope all against a server of scope tables, paired round by round, for what
    # the logs add on top of the tables (TDE alone; the cells say "against scope tables").
    encryption_against: Annotated[list[Against], Field(min_length=1)] = ["plain"]
    # The fscrypt policy's modes (the kernel accepts AES-256-XTS with AES-256-CTS or
    # AES-256-HCTR2, and Adiantum with Adiantum).
    fscrypt_contents: fscrypt.ContentsMode = "AES-256-XTS"
    fscrypt_filenames: fscrypt.FilenamesMode = "AES-256-CTS"
    # Both variants write a binary log (as a production server with replicas or point-in-time
    # recovery does).  Scope `all` turns it on anyway: encrypting it must be the only
    # difference.  Not encrypted under scope `tables`, in either variant.
    binlog: bool = False
    # Instance shapes: a dimension of the study that takes them (its checks refuse them
    # otherwise), each cell measured once per shape with both servers confined to it
    # (servers/shapes.py).  Empty: unconfined, as always.
    shapes: list[ShapeSpec] = []
    # Where the sandboxes' MariaDB comes from (servers/mariadb/installs.py): this host's packages
    # ("system"), or a newer release from a private root (`scripts/setup.sh mariadb-11.8`).
    install: Annotated[str, one_known((installs.SYSTEM, *installs.SANDBOX_ROOTS), "install")] = (
        installs.SYSTEM
    )
    # `encbench run --install NAME` sets it (commands/overrides.py).
    SYSBENCH: ClassVar[Mapping[str, str]] = {"install": "install"}
    # Where the encrypted servers' TDE keys come from (servers/variants.py: KeyProvider);
    # unset, the release's own: MySQL's keyring file, else MariaDB's key file.
    key_provider: KeyProvider | None = None
    # The kinds of server the at-rest and in-transit studies measure on their sandboxes, each
    # where it offers what a cell needs (server_kind.KINDS; "mariadb" is MariaDB or MySQL,
    # its release chosen by `install`).
    kinds: Annotated[list[str], Field(min_length=1)] = ["mariadb"]

    @property
    def keys(self) -> KeyProvider:
        """Where the encrypted servers' TDE keys come from: `key_provider`, else the
        release's own."""
        if self.key_provider is not None:
            return self.key_provider
        return installs.own_key_provider(self.install)

    @field_validator("kinds")
    @classmethod
    def known_kinds(cls, value: list[str]) -> list[str]:
        return all_known(value, server_kind.names(), "server kind")

    @model_validator(mode="before")
    @classmethod
    def key_servers_cipher(cls, data: Any) -> Any:
        """A key server's keys are read by MariaDB's hashicorp_key_management plugin, which
        leaves the cipher to the server: AES-CBC.  Unset, the algorithm is that one (a set
        one that is not is refused: installs.key_provider_problem)."""
        if not isinstance(data, dict) or data.get("key_provider") != "key-server":
            return data
        install = data.get("install", installs.SYSTEM)
        known = (installs.SYSTEM, *installs.SANDBOX_ROOTS)
        if install in known and installs.family_of(install) == installs.MYSQL:
            return data  # refused as it is: MySQL reads no key server's keys
        return {"encryption_algorithm": list(installs.KEY_SERVER_ALGORITHMS), **data}

    @field_validator("shapes")
    @classmethod
    def shape_fits_itself(cls, value: list[ShapeSpec]) -> list[ShapeSpec]:
        names: list[str] = []
        for shape in value:
            if shape.name in names:
                raise ValueError(
                    f"shape name {toml_value(shape.name)} is used twice; give each shape "
                    "its own name"
                )
            names.append(shape.name)
            if shape.cpu_quota is not None and shape.cpu_quota > shape.cpus:
                raise ValueError(
                    f"shape {toml_value(shape.name)}: cpu_quota {shape.cpu_quota:g} is more "
                    f"than its {shape.cpus} CPU(s) can run; give at most {shape.cpus}"
                )
        return value

    @field_validator(
        "encryption_algorithm",
        "encryption_scope",
        "encryption_layer",
        "encryption_against",
        mode="before",
    )
    @classmethod
    def one_or_a_list(cls, value: Any, info: ValidationInfo) -> Any:
        """A single value is a list of one (old profiles keep working unchanged); an unknown
        value is named with the choices before the type check would call it a literal."""
        values = [value] if isinstance(value, str) else value
        if isinstance(values, list):
            kinds = {
                "encryption_algorithm": Algorithm,
                "encryption_layer": Layer,
                "encryption_against": Against,
            }
            choices = get_args(kinds.get(info.field_name or "", Scope))
            what = (info.field_name or "").replace("_", " ")
            if info.field_name == "encryption_against":
                what = "side to measure against"
            all_known([v for v in values if isinstance(v, str)], choices, what)
        return values

    @model_validator(mode="after")
    def fscrypt_modes_pair(self) -> Self:
        pair = (self.fscrypt_contents, self.fscrypt_filenames)
        if pair not in fscrypt.VALID_PAIRS:
            accepted = "; ".join(f"{c} with {f}" for c, f in sorted(fscrypt.VALID_PAIRS))
            raise AcrossKeys(
                f'{{section}}.fscrypt_contents = "{pair[0]}" cannot go with '
                f'{{section}}.fscrypt_filenames = "{pair[1]}" (the kernel accepts {accepted}): '
                "choose one of those pairs"
            )
        return self

    @model_validator(mode="after")
    def against_tables_needs_scope_all(self) -> Self:
        if "tables" not in self.encryption_against:
            return self
        if not ("all" in self.encryption_scope and "tde" in self.encryption_layer):
            raise AcrossKeys(
                '{section}.encryption_against = "tables" measures scope all against scope '
                'tables under TDE: add "all" to {section}.encryption_scope and "tde" to '
                "{section}.encryption_layer, or remove it"
            )
        alone = self.encryption_scope == ["all"] and self.encryption_layer == ["tde"]
        if "plain" not in self.encryption_against and not alone:
            # Every other configuration would be left out, unmeasured, without a word.
            raise AcrossKeys(
                '{section}.encryption_against = "tables" alone measures only scope all under '
                'TDE: add "plain" to it, or set {section}.encryption_scope = "all" and '
                '{section}.encryption_layer = "tde"'
            )
        return self

    @property
    def filesystem(self) -> bool:
        """Whether a configuration puts the encrypted side on an encrypted filesystem."""
        return any(layer != "tde" for layer in self.encryption_layer)

    @property
    def dimensions(self) -> bool:
        """Whether the encrypted configuration varies between cells (more than one value), or
        is another layer than TDE alone (its cells then name it)."""
        return (
            len(self.encryption_algorithm) > 1
            or len(self.encryption_scope) > 1
            or self.encryption_layer != ["tde"]
            or self.encryption_against != ["plain"]
        )

    @property
    def binary_log(self) -> bool:
        """Whether both variants write a binary log, in every configuration of the run (the
        same baseline for scope `tables` and `all`)."""
        return self.binlog or "all" in self.encryption_scope


class RegimeSpec(Strict):
    # in-memory: the buffer pool holds all data with this much headroom (× data size).
    in_memory_headroom: Annotated[float, Field(ge=1.2, le=10)] = 2.0
    # io-bound: the buffer pool is this fraction of the data size.
    io_bound_fraction: Annotated[float, Field(gt=0, le=0.5)] = 0.1
    # MariaDB rounds the buffer pool to whole chunks; below this it would not start.
    min_buffer_pool_mb: Annotated[int, Field(ge=6)] = 8


def _registered_kind(name: str) -> str:
    names = server_kind.names()
    if name not in names:
        # As pydantic words an unknown literal.
        expected = ", ".join(repr(n) for n in names[:-1]) + f" or {names[-1]!r}"
        raise PydanticCustomError(
            "literal_error", "Input should be {expected}", {"expected": expected}
        )
    return name


class TargetSpec(Strict):
    """A server encbench did not start (`[target]`, or `--target` and a DSN: servers/dsn.py).
    No password here: it comes from MYSQL_PWD or --defaults-extra-file (servers/user_server),
    for PostgreSQL from PGPASSWORD or a password file (servers/pg_target)."""

    # The server's kind (servers/server_kind.py): which studies measure it (StudyDefinition.kinds).
    kind: Annotated[str, AfterValidator(_registered_kind)] = "mariadb"
    host: str = ""
    port: Annotated[int, Field(gt=0, lt=65536)] = 3306
    socket: str = ""  # a unix socket path instead of host and port
    user: Annotated[str, Field(min_length=1)]
    ssl_ca: str = ""  # the CA that signed the server's certificate (for TLS connections)
    ssl_cert: str = ""  # a client certificate and its key, where the server asks for one
    ssl_key: str = ""
    # An option file whose [client] section holds the password (--defaults-extra-file); the
    # password itself is never in a profile.
    defaults_extra_file: str = ""
    # Leave encbench's databases on the server after the run (--keep-databases): to look at
    # them.
    keep: bool = False
    # Where the user allows it: the server's host over ssh ("user@host", as `ssh` takes it;
    # BatchMode, so a key or agent must let it in), whose /proc/PID/stat gives the server's
    # CPU (servers/remote_cpu.py); ssh_config: a file for `ssh -F` (port, key, known hosts).
    ssh: str = ""
    ssh_config: str = ""

    @field_validator("host")
    @classmethod
    def plain_host(cls, value: str) -> str:
        if any(c.isspace() or c in "/@?#" for c in value):
            raise ValueError(f"{toml_value(value)} is not a host name; give a name or an address")
        return value

    @field_validator("ssh")
    @classmethod
    def ssh_destination(cls, value: str) -> str:
        if value.startswith("-") or any(c.isspace() for c in value):
            raise ValueError(f"{toml_value(value)} is not an ssh destination; give user@host")
        return value

    @model_validator(mode="after")
    def one_address(self) -> Self:
        if bool(self.host) == bool(self.socket):
            raise ValueError("give either host (and port) or socket, not both")
        if bool(self.ssl_cert) != bool(self.ssl_key):
            raise ValueError("ssl_cert and ssl_key go together; give both")
        kind = server_kind.named(self.kind)
        problem = kind.target_rules(self)
        if problem is not None:
            raise ValueError(problem)
        if "port" not in self.model_fields_set:
            # The kind's own port where the profile gives none.
            object.__setattr__(self, "port", kind.default_port)
        return self

    def connection(self) -> Connection:
        """Where its clients connect and as whom (the database is chosen later)."""
        if self.socket:
            return Connection.unix(Path(self.socket), self.user, "")
        return Connection.tcp(self.host, self.port, self.user, "")


def _registered_study(name: str) -> str:
    names = [s.name for s in _REGISTRY.studies]
    if name not in names:
        # As pydantic words an unknown literal.
        expected = ", ".join(repr(n) for n in names[:-1]) + f" or {names[-1]!r}"
        raise PydanticCustomError(
            "literal_error", "Input should be {expected}", {"expected": expected}
        )
    return name


class Profile(Strict):
    """What every study shares.  A profile read by parse also has each registered study's
    section (`section` reads one, typed)."""

    name: str
    description: str = ""
    # A/A calibration: both sides of every pair are the plain configuration (the `encrypted`
    # role gets a twin of plain), so every difference found is the machine's and encbench's
    # own noise.  `encbench calibrate` sets it; see report/calibration.py.
    calibration: bool = False
    # Runs of `openssl speed` per direction of each server cipher in crypto.json (1 s each,
    # their mean and spread kept): the cipher's floor of the at-rest and operations reports.
    # A tiny profile checking the mechanics (the tests') needs one, not the default's three.
    cipher_speed_repeats: Annotated[int, Field(ge=1, le=10)] = FINGERPRINT_REPEATS
    # Left out: the first registered study (studies/__init__.py: STUDIES).
    studies: Annotated[
        list[Annotated[str, AfterValidator(_registered_study)]], Field(min_length=1)
    ] = Field(default_factory=lambda: [_REGISTRY.studies[0].name])
    data: DataSpec = DataSpec()
    server: ServerSpec = ServerSpec()
    regime: RegimeSpec = RegimeSpec()
    target: TargetSpec | None = None

    @field_validator("name")
    @classmethod
    def safe_name(cls, value: str) -> str:
        if not NAME_PATTERN.fullmatch(value) or ".." in value:
            raise ValueError(
                f"{toml_value(value)} cannot name the results directory results/NAME-TIMESTAMP; "
                f"use only {NAME_CHARACTERS}, and no '..'"
            )
        return value

    def section(self, key: str, kind: type[SectionModel]) -> SectionModel:
        """A study's section of this profile, as its own type."""
        found = getattr(self, key, None)
        if not isinstance(found, kind):
            raise TypeError(f"profile section {key!r} is {type(found).__name__}, not {kind}")
        return found

    def without(self, left_out: Mapping[str, str]) -> Profile:
        """This profile less the studies `left_out` (study → why it cannot run here): what
        this run measures.  The results directory keeps the whole profile."""
        studies = [s for s in self.studies if s not in left_out]
        if not studies:
            whys = "; ".join(f"{name}: {why}" for name, why in left_out.items())
            raise BadInput(f"profile {self.name} has no study that can run here — {whys}")
        return self.model_copy(update={"studies": studies})


class SectionOf(Protocol):
    """What a profile reads of a study's settings (studies/definition.py: Settings)."""

    @property
    def key(self) -> str | None: ...  # the key of its section (a TOML table)
    @property
    def model(self) -> type[Strict] | None: ...  # that section's model
    @property
    def validate(self) -> Callable[[Profile], str | None]: ...  # its checks of the profile


class RegisteredPart(Protocol):
    """What a profile needs of a study's further kind (studies/definition.py: KindCells): its
    section, and its name, which a profile written before it was the study's lists as a
    study."""

    @property
    def study(self) -> str: ...  # the study it is a part of
    @property
    def kind(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def settings(self) -> SectionOf: ...


class RegisteredStudy(Protocol):
    """What a profile needs of a study (studies/definition.py: StudyDefinition has it)."""

    @property
    def name(self) -> str: ...  # as `studies` lists it
    @property
    def settings(self) -> SectionOf: ...
    @property
    def kinds(
        self,
    ) -> tuple[str, ...]: ...  # the kinds of server it can measure (servers/server_kind.py)
    @property
    def install_families(self) -> tuple[str, ...]: ...  # whose private roots it runs from
    @property
    def kind_sections(self) -> Sequence[RegisteredPart]: ...  # its further kinds' sections
    def target_kinds(self, profile: Profile) -> list[str]: ...  # what it measures on a target
    def kinds_in(self, profile: Profile) -> list[str]: ...  # what it measures under a profile


@dataclass
class _Registry:
    studies: tuple[RegisteredStudy, ...] = ()
    model: type[Profile] = Profile


_REGISTRY: _Registry = _Registry()


def register_studies(studies: Sequence[RegisteredStudy]) -> None:
    """The studies a profile may list, in their order, and a profile model with their
    sections (a section left out of the TOML gets its defaults)."""
    settings = [s.settings for s in studies] + [
        p.settings for s in studies for p in s.kind_sections
    ]
    sections: dict[str, Any] = {
        x.key: (x.model, Field(default_factory=x.model))
        for x in settings
        if x.key is not None and x.model is not None
    }
    _REGISTRY.studies = tuple(studies)
    _REGISTRY.model = create_model("Profile", __base__=Profile, **sections)


def registered(name: str) -> RegisteredStudy:
    """The study of that name, as the studies were registered (a study's own modules ask it
    what their package's definition says)."""
    found = [s for s in _REGISTRY.studies if s.name == name]
    if not found:
        raise RuntimeError(f"no study {name!r} is registered: import encbench.studies first")
    return found[0]


def builtin_names() -> list[str]:
    """Every built-in profile, those for the tests too."""
    return sorted(
        p.name.removesuffix(".toml")
        for p in resources.files("encbench.profiles.builtin").iterdir()
        if p.name.endswith(".toml")
    )


# Built in for encbench's own tests (tiny versions of a study or a profile, to check a path
# end to end, not to measure): they run by name, but `encbench profiles`, the README's table
# and the list an unknown name gets leave them out.
FOR_THE_TESTS = frozenset(
    {
        "alibaba-rds-tde-tiny",
        "calibrate-tiny",
        "pg-at-rest-tiny",
        "postgresql-tiny",
        "shapes-tiny",
        "smoke-operations",
        "smoke-pipelines",
        "smoke-replication",
        "smoke-sst",
        "tde-vs-filesystem-tiny",
    }
)


def listed_names() -> list[str]:
    """The built-in profiles a user chooses from."""
    return [name for name in builtin_names() if name not in FOR_THE_TESTS]


def parse(text: str, origin: str) -> Profile:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{origin}: not valid TOML: {exc}") from exc
    if not _REGISTRY.studies:
        # The studies stand above this module: the one list registers them when imported.
        raise RuntimeError("no study is registered: import encbench.studies to read a profile")
    raw = _former_studies(raw, origin)
    try:
        profile = _REGISTRY.model.model_validate(raw)
    except ValidationError as exc:
        raise BadInput(first_error(exc, origin, _REGISTRY.model)) from exc
    # Every study's checks, listed or not: some refuse a setting that only it would use.
    every: list[SectionOf] = [s.settings for s in _REGISTRY.studies]
    every += [p.settings for s in _REGISTRY.studies for p in s.kind_sections]
    problems = (settings.validate(profile) for settings in every)
    problem = (
        next((p for p in problems if p is not None), None)
        or _target_problem(profile)
        or _install_problem(profile)
        or installs.key_provider_problem(profile.server)
    )
    if problem is not None:
        raise BadInput(f"{origin}: {problem}")
    return profile


def _install_problem(profile: Profile) -> str | None:
    """A private root's server is for the studies that run their sandboxes from it."""
    install = profile.server.install
    if install == installs.SYSTEM:
        return None
    if profile.target is not None:
        return (
            f'server.install = "{install}" runs encbench\'s own servers, and a target is '
            "the user's: remove server.install or the target"
        )
    family = installs.family_of(install)
    listed = [s for s in _REGISTRY.studies if s.name in profile.studies]
    others = [s.name for s in listed if family not in s.install_families]
    if others:
        takers = [s.name for s in _REGISTRY.studies if family in s.install_families]
        return (
            f'server.install = "{install}" runs {family} for {", ".join(takers)}; '
            f"{', '.join(others)} not (this host's MariaDB"
            + (", or MySQL with --target: docs/target.md" if family == installs.MYSQL else "")
            + "): remove them from studies, or server.install"
        )
    return installs.sandbox_problem(profile.server)


def no_calibration(study: str) -> Callable[[Profile], str | None]:
    """A study's `validate` (studies/definition.py) while it has no A/A calibration: a
    calibration of a profile that lists it is refused."""

    def problem(profile: Profile) -> str | None:
        if profile.calibration and study in profile.studies:
            return (
                f"the {study} study has no A/A calibration yet; remove "
                f'"{study}" from studies to calibrate'
            )
        return None

    return problem


def _former_studies(raw: dict[str, Any], origin: str) -> dict[str, Any]:
    """A profile that lists a study which is now a further kind of another (a KindCells' name, the
    study it was before) read as listing that study with that kind in `[server] kinds` (and
    its first kind where it is listed itself): results directories keep the profile they
    ran, and a profile written before reads as it was meant. Beside another study that reads
    `[server] kinds`, whose servers that would change, it is refused with the fix."""
    listed = raw.get("studies")
    parts = {p.name: (s, p) for s in _REGISTRY.studies for p in s.kind_sections}
    if not isinstance(listed, list) or not any(n in parts for n in listed if isinstance(n, str)):
        return raw
    server = dict(raw.get("server") or {})
    given = server.get("kinds")
    kinds: list[Any] = list(given) if isinstance(given, list) else []
    studies: list[Any] = []
    for name in listed:
        if not isinstance(name, str) or name not in parts:
            studies.append(name)
            continue
        study, part = parts[name]
        if given is None:
            if study.name in listed:
                kinds.insert(0, study.kinds[0])
            elif any(len(s.kinds) > 1 for s in _REGISTRY.studies if s.name in listed):
                raise BadInput(
                    f'{origin}: studies: "{name}" is now the {part.kind} cells of the study '
                    f'"{study.name}", and [server] kinds would change what the others listed '
                    f'measure: list "{study.name}" instead and give [server] kinds (e.g. '
                    f'kinds = ["{study.kinds[0]}", "{part.kind}"])'
                )
        kinds.append(part.kind)
        studies.append(study.name)
    server["kinds"] = list(dict.fromkeys(kinds))
    return {**raw, "studies": list(dict.fromkeys(studies)), "server": server}


def _target_problem(profile: Profile) -> str | None:
    """What a target cannot be combined with in the common sections."""
    if profile.target is None:
        return None
    if profile.calibration:
        return (
            "an A/A calibration measures this machine's sandboxes, not a target: remove the target"
        )
    kinds = {
        k for s in _REGISTRY.studies if s.name in profile.studies for k in s.target_kinds(profile)
    }
    if profile.target.kind not in kinds:
        return _wrong_kind(profile.target.kind, kinds)
    server = profile.server
    if len(server.encryption_algorithm) > 1 or len(server.encryption_scope) > 1:
        return (
            "a target encrypts with its own settings, so server.encryption_"
            "algorithm and server.encryption_scope take one value each: list one"
        )
    if server.encryption_against != ["plain"]:
        return (
            "a target's table sets are encrypted or not by its own settings: "
            'server.encryption_against takes "plain" (the default) with a target'
        )
    if server.encryption_layer != ["tde"]:
        return (
            "a target's files are on its own filesystem, which encbench does not make: "
            'server.encryption_layer takes "tde" (the default) with a target'
        )
    return None


def _wrong_kind(name: str, measured: set[str]) -> str:
    """A target none of the profile's studies measures, and the two ways to fix it."""
    kind = server_kind.named(name)
    theirs = [k for k in server_kind.kinds() if k.name in measured]
    titles = " and ".join(k.title for k in theirs)
    dsns = " or ".join(k.example_dsn for k in theirs)
    return (
        f"the target is a {kind.title} server and this profile's studies measure {titles}: "
        f"give a {dsns} target, or a profile of {kind.title} studies ({kind.profiles_example})"
    )


def _read_text(path: Path) -> str:
    if path.is_dir():
        raise BadInput(f"profile {path} is a directory; give the path of a .toml file")
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise BadInput(
            f"cannot read profile {path}: it does not exist; give the path of a .toml file, or a "
            "built-in profile's name (`encbench profiles` lists them)"
        ) from exc
    except OSError as exc:
        raise BadInput(
            f"cannot read profile {path}: {exc.strerror}; check its permissions"
        ) from exc
    try:
        # utf-8-sig: an editor's byte-order mark is no reason to refuse a profile.
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInput(
            f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "save the profile as UTF-8 TOML"
        ) from exc


CALIBRATION_LINE = "# Made an A/A calibration by `encbench calibrate`.\ncalibration = true\n"


def as_calibration(profile: Profile, text: str, origin: str) -> tuple[Profile, str]:
    """The same profile as an A/A calibration, and the TOML text that says so (kept with the
    results, so that `--resume` and `encbench report` see a calibration too).  A top-level key
    written first belongs to the top-level table whatever follows."""
    if profile.calibration:
        return profile, text
    if "calibration" in tomllib.loads(text):
        raise BadInput(
            f"{origin}: calibration = false, and `encbench calibrate` measures A/A: remove "
            "that line (or measure plain against encrypted with `encbench run`)"
        )
    text = CALIBRATION_LINE + text
    return parse(text, origin), text


# The names the built-in profiles had before they were named after the published study they
# follow: result sets, scripts and habits still name them, so they still run, unlisted.
FORMER_NAMES: dict[str, str] = {
    "seed-2013-ssl": "percona-2013-ssl",
    "seed-2017-sst": "percona-2017-sst",
    "seed-2017-sst-aesni": "percona-2017-sst-aesni",
    "seed-2019-decryption": "percona-2019-decryption",
    "seed-rds-tde": "alibaba-rds-tde",
    "seed-rds-tde-shapes": "alibaba-rds-tde-shapes",
    "seed-rds-tde-tiny": "alibaba-rds-tde-tiny",
}


def origin_words(name_or_path: str) -> str:
    """How an error names the profile: "profile quick", or the path of the user's file."""
    name = FORMER_NAMES.get(name_or_path, name_or_path)
    return f"profile {name}" if name in builtin_names() else name_or_path


def load(name_or_path: str) -> tuple[Profile, str]:
    """Returns the profile and its TOML text (kept with the results for --resume)."""
    name = FORMER_NAMES.get(name_or_path, name_or_path)
    if name in builtin_names():
        text = resources.files("encbench.profiles.builtin").joinpath(f"{name}.toml").read_text()
        return parse(text, origin_words(name)), text
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        text = _read_text(path)
        return parse(text, str(path)), text
    guess = did_you_mean(name_or_path)
    raise BadInput(
        f"unknown profile {name_or_path!r}: {f'did you mean {guess!r}? ' if guess else ''}"
        f"use one of {', '.join(listed_names())} or the path of a .toml file "
        "(`encbench profiles` lists them)"
    )


def did_you_mean(name: str) -> str | None:
    """The built-in profile a misspelt name most likely means; a former name counts as the
    profile it was renamed to."""
    candidates = [*builtin_names(), *FORMER_NAMES]
    # A name cut short ("percona-2019") means the one profile it begins, if only one does.
    begun = {FORMER_NAMES.get(c, c) for c in candidates if c.startswith(name)}
    if len(begun) == 1:
        return begun.pop()
    found = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return FORMER_NAMES.get(found[0], found[0]) if found else None
