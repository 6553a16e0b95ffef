#!/usr/bin/env bash
# Installs what the test suite needs beyond Rust, when missing and when we
# may (root with apt-get). Everything here is optional for the tests that
# need it: they skip with a message when a peer is unavailable.
set -uo pipefail
need=()
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
if [ ${#need[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${need[*]} for the conformance tests" >&2
  apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null 2>&1 \
    || echo "warning: could not install ${need[*]}; tests needing them will be skipped" >&2
fi
# The real agent CLIs (Claude Code, Codex, Gemini CLI, pi, acpx with Node 22)
# for the conformance harness in crates/harness.
bash scripts/install-agent-clis.sh >/dev/null \
  || echo "warning: some agent CLIs could not be installed; the harness tests fail in CI and skip elsewhere" >&2
bash "$(dirname "$0")/install-chromium.sh"
# tmux, the terminal the tests of `agentlog pick` drive it in.
bash "$(dirname "$0")/install-tmux.sh"
bash "$(dirname "$0")/install-ccusage.sh" >/dev/null || echo "warning: ccusage could not be installed; the token comparison test will fail under CI" >&2
# The further agent CLIs whose files agentlog reads (Copilot, OpenCode, Kilo,
# Qwen Code with Node 22, Factory Droid, Continue CLI, Cline, Aider, Mistral Vibe 3.x and 2.x, Kimi
# Code CLI and OpenHands 0.x and 1.x with Python 3.13) for crates/harness/tests/more_agents.rs.
bash scripts/install-more-agent-clis.sh copilot opencode kilo qwen droid continue cline aider vibe vibe2 kimi openhands openhands1 >/dev/null \
  || echo "warning: some of the further agent CLIs could not be installed; their harness tests fail in CI and skip elsewhere" >&2
# Arize Phoenix and opentelemetry-proto (Python, in target/phoenix/venv) for
# the OTLP trace tests (crates/cli/tests/otel.rs).
bash "$(dirname "$0")/install-phoenix.sh" >/dev/null || echo "warning: Arize Phoenix could not be installed; the trace tests will be skipped (or fail with CI set)" >&2
# Harbor (PyPI, on the Python 3.13 above) whose models validate the ATIF
# trajectories agentlog writes, for crates/cli/tests/atif.rs.
bash "$(dirname "$0")/install-harbor.sh" >/dev/null || echo "warning: Harbor could not be installed; the ATIF validation test will fail under CI" >&2
# The official Python MCP SDK, the client the protocol tests of `agentlog mcp` drive it with.
bash "$(dirname "$0")/install-mcp-client.sh" >/dev/null || echo "warning: the Python MCP client could not be installed; the MCP protocol tests will fail under CI" >&2
# PostgreSQL for the team backend's tests (they start their own throwaway server).
bash "$(dirname "$0")/postgres.sh" install || echo "warning: could not install PostgreSQL; its tests will be skipped (or fail with CI set)" >&2
# Hugging Face datasets, which loads the training sets of crates/cli/tests/dataset.rs.
bash "$(dirname "$0")/install-hf-datasets.sh" >/dev/null || echo "warning: could not install Hugging Face datasets; the dataset tests will be skipped (or fail with CI set)" >&2
exit 0
