"""deploy/ as far as it can be checked without systemd or Docker: the unit's sections and keys,
the compose file's services and the Ollama profile's settings, what the Dockerfile copies, and a
deploy/README whose walk-through uses commands that exist. deploy/check runs the real tools
(systemd-analyze verify, docker compose config, docker build) where they are."""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import subprocess
from pathlib import Path, PurePosixPath

import pytest
import yaml

from bot.cli import build_parser
from bot.settings import Settings, load_settings

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"

Unit = dict[str, dict[str, list[str]]]

# The keys a hand-written unit may use, per section (systemd.unit, systemd.service,
# systemd.exec, systemd.kill, systemd.resource-control): a misspelt key is what systemd
# silently ignores, so it fails here.
_UNIT_KEYS = {
    "Unit": {"Description", "Documentation", "After", "Before", "Wants", "Requires",
             "BindsTo", "PartOf", "Conflicts", "ConditionPathExists", "StartLimitBurst",
             "StartLimitIntervalSec"},
    "Service": {"Type", "User", "Group", "WorkingDirectory", "Environment", "EnvironmentFile",
                "ExecStart", "ExecStartPre", "ExecStop", "ExecReload", "KillSignal",
                "KillMode", "TimeoutStartSec", "TimeoutStopSec", "Restart", "RestartSec",
                "StateDirectory", "StateDirectoryMode", "UMask", "NoNewPrivileges",
                "ProtectSystem", "ProtectHome", "PrivateTmp", "PrivateDevices",
                "ReadWritePaths", "ReadOnlyPaths", "MemoryMax", "CPUQuota", "Nice",
                "LimitNOFILE", "SyslogIdentifier", "StandardOutput", "StandardError"},
    "Install": {"WantedBy", "RequiredBy", "Alias", "Also"},
}
_TIME = re.compile(r"^(\d+)(s|sec)?$")


def _env_names() -> set[str]:
    """Every variable hearth's settings read (DESIGN §10)."""
    return {str(choice) for field in Settings.model_fields.values()
            for choice in getattr(field.validation_alias, "choices", [])}


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def parse_unit(text: str) -> Unit:
    """A systemd unit file as {section: {key: [values]}}: comments and blank lines dropped,
    a trailing backslash continues the line, a key may repeat (Environment=)."""
    sections: Unit = {}
    current: dict[str, list[str]] | None = None
    logical: list[tuple[int, str]] = []
    pending = ""
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not pending and (not line or line[0] in "#;"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append((number, pending + line))
        pending = ""
    assert not pending, "the unit ends inside a continued line"
    for number, line in logical:
        if line.startswith("[") and line.endswith("]"):
            name = line[1:-1]
            assert name not in sections, f"line {number}: [{name}] appears twice"
            current = sections.setdefault(name, {})
            continue
        assert current is not None, f"line {number}: a setting before any [Section]"
        key, sep, value = line.partition("=")
        assert sep and key.strip() and " " not in key.strip(), f"line {number}: not KEY=VALUE"
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


@pytest.fixture(scope="module")
def unit() -> Unit:
    return parse_unit((DEPLOY / "hearth.service").read_text())


def _one(unit: Unit, section: str, key: str) -> str:
    values = unit[section].get(key, [])
    assert len(values) == 1, f"[{section}] {key}= should be set once, is {values}"
    return values[0]


def _unknown_keys(unit: Unit) -> list[str]:
    return sorted(f"[{section}] {key}" for section, keys in unit.items()
                  for key in keys if key not in _UNIT_KEYS.get(section, set()))


def test_unit_has_the_three_sections_and_only_keys_systemd_knows(unit: Unit) -> None:
    assert set(unit) == {"Unit", "Service", "Install"}
    assert _unknown_keys(unit) == [], "keys systemd would ignore"


def test_unit_runs_hearth_run_from_its_checkout_as_its_own_user(unit: Unit) -> None:
    workdir = PurePosixPath(_one(unit, "Service", "WorkingDirectory"))
    assert workdir.is_absolute()
    exec_start = shlex.split(_one(unit, "Service", "ExecStart"))
    assert exec_start == [str(workdir / ".venv" / "bin" / "hearth"), "run"]
    user = _one(unit, "Service", "User")
    assert user and user != "root"
    assert _one(unit, "Service", "Type") in {"simple", "exec"}
    assert unit["Install"]["WantedBy"] == ["multi-user.target"]


def test_unit_keeps_the_database_in_its_private_state_directory(unit: Unit) -> None:
    env = dict(v.split("=", 1) for v in unit["Service"].get("Environment", []))
    assert set(env) <= {*_env_names(), "HF_HUB_OFFLINE"}, "a variable hearth does not read"
    assert env["HF_HUB_OFFLINE"] == "1"
    state = PurePosixPath("/var/lib") / _one(unit, "Service", "StateDirectory")
    assert PurePosixPath(env["HEARTH_DB"]).parent == state
    assert str(state) in _one(unit, "Service", "ReadWritePaths").split()
    assert _one(unit, "Service", "StateDirectoryMode") == "0700"
    assert _one(unit, "Service", "UMask") == "0077"


def test_unit_gives_the_bot_more_than_its_ten_seconds_to_stop(unit: Unit) -> None:
    assert _one(unit, "Service", "KillSignal") == "SIGTERM"
    timeout = _TIME.match(_one(unit, "Service", "TimeoutStopSec"))
    assert timeout and int(timeout.group(1)) > 10


def test_the_unit_parser_catches_what_systemd_would_ignore() -> None:
    broken = (DEPLOY / "hearth.service").read_text().replace("ExecStart=", "ExecStrat=")
    assert _unknown_keys(parse_unit(broken)) == ["[Service] ExecStrat"]
    with pytest.raises(AssertionError, match="KEY=VALUE"):
        parse_unit("[Service]\nExecStart /bin/true\n")


def _compose() -> dict:  # type: ignore[type-arg]  # YAML
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def test_compose_builds_hearth_from_the_checkout_with_the_database_on_a_volume() -> None:
    compose = _compose()
    hearth = compose["services"]["hearth"]
    assert "profiles" not in hearth, "hearth itself starts without naming a profile"
    context = (DEPLOY / hearth["build"]["context"]).resolve()
    assert context == ROOT
    assert (context / hearth["build"]["dockerfile"]) == DEPLOY / "Dockerfile"
    assert hearth["env_file"] == "../.env"
    volume, mount = hearth["volumes"][0].split(":")
    assert volume in compose["volumes"]
    assert PurePosixPath(hearth["environment"]["HEARTH_DB"]).parent == PurePosixPath(mount)
    assert int(hearth["stop_grace_period"].rstrip("s")) > 10


def test_compose_has_ollama_under_its_own_profile_with_its_models_on_a_volume() -> None:
    compose = _compose()
    ollama = compose["services"]["ollama"]
    assert ollama["profiles"] == ["ollama"]
    assert ollama["image"].startswith("ollama/ollama:")
    volume, mount = ollama["volumes"][0].split(":")
    assert volume in compose["volumes"] and mount == "/root/.ollama"
    assert "ports" not in ollama, "Ollama is reached by hearth on the compose network only"
    # her prompts run to about 4000 tokens: Ollama's default window would cut them silently
    assert int(ollama["environment"]["OLLAMA_CONTEXT_LENGTH"]) >= 8192


def _dotenv(path: Path) -> dict[str, str]:
    pairs = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, sep, value = line.partition("=")
            assert sep, line
            pairs[key.strip()] = value.strip()
    return pairs


def test_the_ollama_profiles_env_points_hearth_at_the_ollama_service(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = DEPLOY / "ollama.env"
    pairs = _dotenv(path)
    assert set(pairs) <= _env_names()
    for name in _env_names():
        monkeypatch.delenv(name, raising=False)
    settings = load_settings(_env_file=path)
    assert settings.openai_base_url == "http://ollama:11434/v1"
    assert settings.model, "HEARTH_MODEL names the model pulled into that Ollama"
    readme = (DEPLOY / "README.md").read_text()
    assert f"ollama pull {settings.model}" in readme
    assert f"ollama pull {settings.model}" in (DEPLOY / "ollama.env").read_text()


def _dockerfile() -> list[tuple[str, str]]:
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    found = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            instruction, _, rest = line.strip().partition(" ")
            found.append((instruction.upper(), rest.strip()))
    return found


def test_the_dockerfile_copies_every_package_hearth_installs_and_runs_it_as_a_user() -> None:
    steps = _dockerfile()
    copied = set()
    for instruction, rest in steps:
        if instruction == "COPY":
            *sources, _target = rest.split()
            copied.update(s.rstrip("/") for s in sources)
    for source in copied:
        assert (ROOT / source).exists(), f"COPY {source}: not in the checkout"
    pyproject = (ROOT / "pyproject.toml").read_text()
    packages = re.search(r'^packages = \[(.*)\]', pyproject, re.M)
    assert packages
    top = {name.strip().strip('"').split(".")[0] for name in packages.group(1).split(",")}
    assert top | {"pyproject.toml", "README.md"} <= copied
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().split()
    assert "*" in ignore and all(f"!{s}" in ignore or f"!{s}/" in ignore for s in copied)
    assert ("USER", "hearth") in steps
    assert ("CMD", '["hearth", "run"]') in steps
    assert ("STOPSIGNAL", "SIGTERM") in steps
    env = next(rest for instruction, rest in steps if instruction == "ENV")
    volume = next(rest for instruction, rest in steps if instruction == "VOLUME")
    db = re.search(r"HEARTH_DB=(\S+)", env)
    assert db and f'"{PurePosixPath(db.group(1)).parent}"' in volume


def _readme_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", (DEPLOY / "README.md").read_text(), re.S)


def test_deploy_readme_walks_through_first_start_backup_restore_and_upgrade() -> None:
    readme = (DEPLOY / "README.md").read_text()
    headings = [h.lower() for h in re.findall(r"^#+ (.+)$", readme, re.M)]
    for step in ("first start", "backup", "restore", "upgrade"):
        # once with systemd, once with Docker Compose
        assert sum(h == step for h in headings) == 2, step
    commands = " ".join(_readme_blocks())
    for needed in ("hearth backup", "hearth restore", "hearth receipts verify",
                   "hearth doctor", "hearth init", "systemctl enable --now hearth",
                   "COMPOSE_FILE=deploy/compose.yaml", "COMPOSE_PROFILES=ollama",
                   "make install", "make embedded"):
        assert needed in commands, needed


def _hearth_invocations() -> list[list[str]]:
    """Each use of the command line in the README's shell blocks: `.venv/bin/hearth ...` on the
    host, `... exec hearth hearth ...` / `... run --rm hearth hearth ...` in a container."""
    found = []
    for block in _readme_blocks():
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            for i, word in enumerate(words):
                in_container = word == "hearth" and words[i - 1:i] == ["hearth"]
                if word.endswith("/bin/hearth") or in_container:
                    found.append(words[i + 1:])
    return found


def test_every_hearth_command_in_the_deploy_readme_exists() -> None:
    commands = _subcommands(build_parser())
    invocations = _hearth_invocations()
    assert len(invocations) >= 8
    for words in invocations:
        assert words and words[0] in commands, f"hearth {' '.join(words)}"
        inner = _subcommands(commands[words[0]])
        if inner and len(words) > 1 and not words[1].startswith("-"):
            assert words[1] in inner, f"hearth {' '.join(words)}"


BASH = shutil.which("bash")


@pytest.mark.skipif(BASH is None, reason="no bash")
def test_every_shell_block_in_the_deploy_readme_parses() -> None:
    assert BASH
    for block in _readme_blocks():
        result = subprocess.run(  # noqa: S603 -- bash -n only parses, it runs nothing
            [BASH, "-n"], input=block, text=True, capture_output=True, check=False)
        assert result.returncode == 0, (block, result.stderr)


def test_ci_runs_the_deploy_checks() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "deploy/check" in ci
    assert (DEPLOY / "check").stat().st_mode & 0o111
