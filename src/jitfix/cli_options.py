"""The options of the command line that several commands share, defined once, and how
they resolve to :class:`~jitfix.config.Settings`."""

from __future__ import annotations

import functools
import inspect
import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Annotated, Callable, Optional

import typer

from jitfix.config import DEFAULT_VALIDATE_TIMEOUT, Settings
from jitfix.pyproject import (ConfigError, check_selector, load_config_file, load_settings, parse_target_version,
                               with_override)

TARGET_VERSIONS = [f"py3{minor}" for minor in range(10, 15)]

Paths = Annotated[Optional[list[str]], typer.Argument(
    help="Files or folders to process (none: the current folder); - reads stdin.", show_default=False,
    metavar="PATH")]
CodeList = Optional[list[str]]


@dataclass
class Shared:
    """The options of check, fix and diff: which rules and files, configuration, output."""

    select: Annotated[CodeList, typer.Option("--select", metavar="CODES",
                                             help="Only these rule codes or prefixes (JF4,JF401).")] = None
    extend_select: Annotated[CodeList, typer.Option("--extend-select", metavar="CODES",
                                                    help="Rule codes or prefixes to add to the selection.")] = None
    ignore: Annotated[CodeList, typer.Option("--ignore", metavar="CODES",
                                             help="Skip these rule codes or prefixes.")] = None
    extend_ignore: Annotated[CodeList, typer.Option("--extend-ignore", metavar="CODES",
                                                    help="Rule codes or prefixes to skip, added to the ignored.")] = None
    per_file_ignores: Annotated[CodeList, typer.Option(
        "--per-file-ignores", metavar="GLOB:CODES",
        help="Skip these codes in files matching GLOB, e.g. 'tests/*:JF4' (repeatable).")] = None
    exclude: Annotated[CodeList, typer.Option("--exclude", metavar="GLOB",
                                              help="Glob of paths to skip when walking folders.")] = None
    force_exclude: Annotated[Optional[bool], typer.Option(
        "--force-exclude/--no-force-exclude", show_default=False,
        help="Apply --exclude to files named on the command line too (for pre-commit and editors).")] = None
    respect_gitignore: Annotated[Optional[bool], typer.Option(
        "--respect-gitignore/--no-respect-gitignore", show_default=False,
        help="Skip what git ignores when walking folders (default: on).")] = None
    target_version: Annotated[Optional[str], typer.Option(
        "--target-version", metavar="|".join(TARGET_VERSIONS),
        help="The Python the code runs on (default: the lower bound of [project] requires-python); "
             "a file whose syntax the running Python cannot parse says so.")] = None
    config: Annotated[CodeList, typer.Option(
        "--config", metavar="FILE|KEY=VALUE",
        help="Read the settings from this file (a pyproject.toml's [tool.jitfix], or a TOML file of jitfix's "
        "options alone), or set one option: --config 'loop-strategy = \"lax\"' (repeatable).")] = None
    jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", min=1, metavar="N",
                                                help="Worker processes (default: all cores).")] = None
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only findings and errors: no summary, progress or list of what was fixed.")] = False
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Say what happens to every file.")] = False
    no_color: Annotated[bool, typer.Option(
        "--no-color", help="Never colour output (default: colour on terminals; NO_COLOR and FORCE_COLOR are "
        "honoured).")] = False
    stdin_filename: Annotated[Optional[str], typer.Option("--stdin-filename", metavar="PATH",
                                                          help="Name to report for code read from stdin.")] = None
    no_cache: Annotated[bool, typer.Option(
        "--no-cache", help="Process every file, ignoring and not updating .jitfix_cache/.")] = False
    show_settings: Annotated[bool, typer.Option(
        "--show-settings", help="Print the settings a run would use, and where they come from; then exit.")] = False
    show_files: Annotated[bool, typer.Option("--show-files",
                                             help="Print the files a run would process; then exit.")] = False


PLATFORM_OPTION = typer.Option(
    "--platform", metavar="NAME", help="The JAX platform your code runs on under jitfix: cpu, gpu or tpu (sets "
    "JAX_PLATFORMS for it). By default yours: JAX_PLATFORMS as you set it, else what the machine has.")


def use_platform(platform: str | None) -> None:
    """Run the user's code on ``platform``: children take ``JAX_PLATFORMS`` from jitfix's
    own environment (``validate.process.environment``)."""
    if platform:
        os.environ["JAX_PLATFORMS"] = platform.strip().lower()


@dataclass
class Validation:
    """The options that import and run the user's code (and the report of what was done)."""

    validate: Annotated[bool, typer.Option(
        "--validate", help="Run every rewritten function: the original eagerly (jax.disable_jit) and the rewrite "
        "under jax.jit, on the same inputs, and compare. IMPORTS AND RUNS YOUR CODE, one process per module. "
        "fix writes only the rewrites that pass.")] = False
    examples: Annotated[Optional[Path], typer.Option(
        "--examples", metavar="FILE", help="Inputs for --validate: a Python file defining "
        "EXAMPLES = {\"pkg.mod:function\": [((args...), {kwargs}), ...]}. Implies --validate.")] = None
    record: Annotated[Optional[str], typer.Option(
        "--record", metavar="COMMAND", help="Inputs for --validate: run COMMAND (e.g. \"pytest tests/\") and "
        "capture the arguments the rewritten functions are called with. Runs your code. Implies --validate.")] = None
    validate_timeout: Annotated[Optional[float], typer.Option(
        "--validate-timeout", metavar="SECONDS", min=1, help=f"Time limit per module for --validate and --record "
        f"(default {DEFAULT_VALIDATE_TIMEOUT:g}).")] = None
    pass_env: Annotated[CodeList, typer.Option(
        "--pass-env", metavar="NAME", help="Pass this environment variable on to your code under --validate and "
        "--record (repeatable). Only what Python and JAX need is passed otherwise: secrets stay out.")] = None
    platform: Annotated[Optional[str], PLATFORM_OPTION] = None
    allow_unvalidated: Annotated[bool, typer.Option(
        "--allow-unvalidated", help="With --validate: also write rewrites whose validation was skipped or could "
        "not run (by default fix writes only what passed).")] = False
    report_file: Annotated[Optional[Path], typer.Option(
        "--report", metavar="FILE", help="Write a migration report (markdown): every file, every rewrite with "
        "its rule and validation evidence, every finding left for a person.")] = None

    @property
    def asked(self) -> bool:
        return bool(self.validate or self.examples or self.record)


def with_options(*groups: type) -> Callable:
    """Give a command the options of ``groups`` (dataclasses whose fields are typer options):
    typer sees each field as a parameter, the command receives one instance per group."""

    def decorate(command: Callable) -> Callable:
        signature = inspect.signature(command, eval_str=True)
        own = [p for p in signature.parameters.values() if p.annotation not in groups]
        group_of = {p.name: p.annotation for p in signature.parameters.values() if p.annotation in groups}
        hints = {group: inspect.get_annotations(group, eval_str=True) for group in groups}
        added = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                                   annotation=hints[group][f.name])
                 for group in groups for f in fields(group)]

        @functools.wraps(command)
        def wrapper(**given):
            for name, group in group_of.items():
                given[name] = group(**{f.name: given.pop(f.name) for f in fields(group)})
            return command(**given)

        setattr(wrapper, "__signature__", signature.replace(parameters=own + added))  # what typer reads
        wrapper.__annotations__ = {p.name: p.annotation for p in own + added}
        return wrapper

    return decorate


def _codes(values: CodeList) -> Optional[tuple[str, ...]]:
    if not values:
        return None
    return tuple(code.strip().upper() for value in values for code in value.split(",") if code.strip())


def _per_file_ignores(values: CodeList) -> tuple[tuple[str, tuple[str, ...]], ...]:
    pairs = []
    for value in values or ():
        pattern, colon, codes = value.rpartition(":")
        if not colon or not pattern or not codes.strip():
            raise ConfigError(f"--per-file-ignores {value!r}: expected GLOB:CODES, e.g. 'tests/*:JF4'")
        pairs.append((pattern, _codes([codes]) or ()))
    return tuple(pairs)


def resolve_settings(paths: list[str], shared: Shared) -> Settings:
    """[tool.jitfix] of the pyproject.toml named or found, then --config KEY=VALUE, then flags."""
    files = [value for value in shared.config or () if "=" not in value or Path(value).is_file()]
    assignments = [value for value in shared.config or () if value not in files]
    if len(files) > 1:
        raise ConfigError("--config names more than one file")
    if files and not Path(files[0]).is_file():
        raise ConfigError(f"--config {files[0]}: no such file")
    if files:
        settings = load_config_file(Path(files[0]))
    else:
        start = Path(next((p for p in paths if p != "-"), "."))
        settings = load_settings(start if start.exists() else Path("."))
    for assignment in assignments:
        settings = with_override(settings, assignment)
    flags = {"--select": _codes(shared.select), "--extend-select": _codes(shared.extend_select),
             "--ignore": _codes(shared.ignore), "--extend-ignore": _codes(shared.extend_ignore)}
    per_file = _per_file_ignores(shared.per_file_ignores)
    for flag, codes in [*flags.items(), *(("--per-file-ignores", codes) for _, codes in per_file)]:
        for code in codes or ():
            check_selector(code, flag)
    select = flags["--select"] or settings.select
    ignore = flags["--ignore"] or settings.ignore
    return settings.with_overrides(
        select=select + (flags["--extend-select"] or ()),
        ignore=ignore + (flags["--extend-ignore"] or ()),
        per_file_ignores=settings.per_file_ignores + per_file if per_file else None,
        exclude=settings.exclude + tuple(shared.exclude) if shared.exclude else None,
        force_exclude=shared.force_exclude, respect_gitignore=shared.respect_gitignore,
        target_version=parse_target_version(shared.target_version, "--target-version")
        if shared.target_version else None,
    )
