from __future__ import annotations

from agent_client.calllog import CallLog
from agent_client.loop import Agent, Limits, Observer
from agent_client.models import Message, RunResult
from agent_client.providers import make_model, resolve

from .fake_llm import FakeLLM


def make_agent(
    llm: FakeLLM,
    conn,
    wire: str = "openai",
    *,
    max_retries: int = 2,
    observer: Observer | None = None,
    session: str | None = None,
    strategy: str = "react",
    expand: bool = False,
    reflect: bool = False,
    **limits,
) -> Agent:
    """The real SDK for `wire`, pointed at the fake server, with the test key read from FAKE_LLM_KEY."""
    provider = resolve(wire, base_url=llm.url + ("/v1" if wire == "openai" else ""), api_key_env="FAKE_LLM_KEY")
    model = make_model(provider, max_retries=max_retries, timeout_s=10)
    return Agent(
        model,
        conn,
        provider.spec.prices,
        limits=Limits(**limits),
        log=CallLog(),
        session=session,
        observer=observer,
        strategy=strategy,
        expand=expand,
        reflect=reflect,
    )  # type: ignore[arg-type]


async def ask(
    question: str, llm: FakeLLM, conn, wire: str = "openai", *, history: list[Message] | None = None, **kw
) -> RunResult:
    agent = make_agent(llm, conn, wire, **kw)
    try:
        return await agent.ask(question, history or [])
    finally:
        await agent.model.aclose()
