"""A PostgreSQL password never shows (issue 26): in every form libpq takes it (userinfo, `?password=`, both,
percent-encoded, `sslpassword`, `passfile`, key=value pairs with quotes and escapes, several hosts, a misspelt
key), neither in `index`'s and `status`'s output, nor in the error when the database cannot be reached, nor in a
server's serving line. The real CLI and server processes against a real PostgreSQL (tests/store/postgres/conftest.py) or a closed port."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from mcp_docs.cli import main
from mcp_docs.store.postgres.dsn import redact

from ...server_fixtures import child_env, free_port, stop, write

psycopg = pytest.importorskip(
    "psycopg", reason="psycopg is not installed: pip install -e '.[test]' to run the PostgreSQL store tests"
)

SECRET = "S3cret-pw-4711"
SSL_SECRET = "Ssl-kEy-pw-0815"
PASSFILE = "/home/ops/.secret-pgpass"


def _forms(host: str, port: int, db: str) -> dict[str, tuple[str, list[str]]]:
    """Every credential form: name -> (connection string, the secrets it holds as written)."""
    encoded = quote("p@ss/w?rd " + SECRET, safe="")
    return {
        "userinfo": (f"postgresql://postgres:{SECRET}@{host}:{port}/{db}", [SECRET]),
        "query": (f"postgresql://postgres@{host}:{port}/{db}?password={SECRET}", [SECRET]),
        "both": (f"postgresql://postgres:{SECRET}@{host}:{port}/{db}?password={SSL_SECRET}", [SECRET, SSL_SECRET]),
        "percent-encoded": (f"postgresql://postgres:{encoded}@{host}:{port}/{db}", [SECRET, encoded]),
        "encoded key": (f"postgres://postgres@{host}:{port}/{db}?sslmode=disable&pass%77ord={SECRET}", [SECRET]),
        "sslpassword": (f"postgresql://postgres@{host}:{port}/{db}?sslpassword={SSL_SECRET}", [SSL_SECRET]),
        "passfile": (f"postgresql://postgres@{host}:{port}/{db}?passfile={PASSFILE}", [PASSFILE]),
        "hosts": (f"postgresql://postgres:{SECRET}@{host}:{free_port()},{host}:{port}/{db}", [SECRET]),
        "unencoded": (f"postgresql://postgres:{SECRET}/x?y@{host}:{port}/{db}", [SECRET]),
        "key=value": (f"host={host} port={port} dbname={db} user=postgres password={SECRET}", [SECRET]),
        "key=value quoted": (
            f"host={host} port={port} dbname={db} password = 'a \\' {SECRET}' sslpassword={SSL_SECRET}",
            [SECRET, SSL_SECRET],
        ),
        "key=value passfile": (f"host={host} port={port} dbname={db} passfile='{PASSFILE}'", [PASSFILE]),
        # a misspelt key: libpq refuses it, and its message must not show the value meant as a password
        "misspelt key": (f"postgresql://postgres@{host}:{port}/{db}?passwrod={SECRET}", [SECRET]),
        "key=value misspelt": (f"host={host} port={port} dbname={db} passwd={SECRET}", [SECRET]),
    }


FORMS = sorted(_forms("h", 5432, "d"))


@pytest.mark.parametrize("form", FORMS)
def test_every_credential_form_is_masked_and_the_rest_kept(form: str) -> None:
    dsn, secrets = _forms("db.example.org", 6543, "notes")[form]
    shown = redact(dsn)
    assert "***" in shown and "db.example.org" in shown and "notes" in shown, shown
    for secret in secrets:
        assert secret not in shown, shown


@pytest.mark.parametrize("form", FORMS)
def test_an_unreachable_database_names_it_without_any_credential(
    form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "vault"
    write(root, "a.md", "# Alpha\n")
    dsn, secrets = _forms("127.0.0.1", free_port(), "nowhere")[form]
    db = ["--store", "postgres", "--database-url", dsn]
    assert main(["index", "--root", str(root), "--embeddings", "none", *db]) == 2
    assert main(["status", "--root", str(root), *db]) == 2
    out = capsys.readouterr()
    text = out.out + out.err
    assert "cannot be reached" in text and "***" in text and "Traceback" not in text, text
    for secret in secrets:
        assert secret not in text, text


def test_status_and_the_serving_line_of_a_reachable_database_show_no_credential(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pgserver's PostgreSQL trusts its Unix socket: it ignores the passwords, so each form connects."""
    socket_dir = database.split("host=", 1)[1].split("&")[0]
    name = database.split("?")[0].rsplit("/", 1)[1]
    root = tmp_path / "vault"
    write(root, "a.md", "# Alpha\n\nAbout numbats.\n")
    assert main(["index", "--root", str(root), "--store", "postgres", "--database-url", database]) == 0
    forms = {
        "query": (f"postgresql://postgres@/{name}?host={socket_dir}&password={SECRET}", [SECRET]),
        "both": (f"postgresql://postgres:{SECRET}@/{name}?host={socket_dir}&sslpassword={SSL_SECRET}", [SECRET]),
        "key=value": (f"host={socket_dir} dbname={name} user=postgres password='{SECRET} x'", [SECRET]),
    }
    capsys.readouterr()
    for form, (dsn, secrets) in forms.items():
        assert main(["status", "--json", "--store", "postgres", "--database-url", dsn]) == 0, form
        out = capsys.readouterr().out
        assert json.loads(out)["documents"] == 1
        assert all(secret not in out for secret in secrets) and "***" in out, (form, out)
    for form, (dsn, secrets) in forms.items():
        serve = ["serve", "--store", "postgres", "--transport", "http", "--port", str(free_port())]
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_docs", *serve, "--embeddings", "none", "-v"],
            env=child_env(MCP_DOCS_DATABASE_URL=dsn, XDG_CACHE_HOME=str(tmp_path / "cache")),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        lines: list[str] = []
        try:
            assert proc.stderr is not None
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                line = proc.stderr.readline().decode(errors="replace")
                if not line:
                    break
                lines.append(line)
                if "serving the PostgreSQL index" in line:
                    break
        finally:
            stop(proc)
        served = "".join(lines)
        assert "serving the PostgreSQL index" in served and "***" in served, (form, served)
        assert all(secret not in served for secret in secrets), (form, served)
