// The real pi SessionManager (npm @mariozechner/pi-coding-agent), driven for
// agentlog's conformance tests and benchmarks.
//
//   node pi-peer.mjs <session-manager.js> contexts <file> [leaf]
//       Opens <file> with SessionManager.open and prints, as JSON, the leaf id,
//       the context at the leaf and (without `leaf`) the context at every entry.
//   node pi-peer.mjs <session-manager.js> create <dir>
//       Creates a session in <dir> with branches, labels, a compaction, a
//       branch summary and custom entries; prints its path.
//   node pi-peer.mjs <session-manager.js> bench <file> [runs]
//       Times SessionManager.open + buildSessionContext; prints JSON with
//       the best time in ms, the message count and the peak RSS in KiB.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [modulePath, cmd, arg, extra] = process.argv.slice(2);
const mod = await import(pathToFileURL(modulePath).href);
const { SessionManager, buildSessionContext } = mod;

// The peak resident set of this process (VmHWM; getrusage's maxRSS can
// carry the parent's figure across exec).
function peakRssKiB() {
	try {
		const m = readFileSync("/proc/self/status", "utf8").match(/^VmHWM:\s+(\d+)/m);
		if (m) return Number(m[1]);
	} catch {}
	return process.resourceUsage().maxRSS;
}

function pick(ctx) {
	return { messages: ctx.messages, thinkingLevel: ctx.thinkingLevel, model: ctx.model };
}

if (cmd === "contexts") {
	const sm = SessionManager.open(arg, undefined);
	const entries = sm.getEntries();
	const byId = new Map(entries.map((e) => [e.id, e]));
	const at = {};
	if (extra !== "leaf") for (const e of entries) at[e.id] = pick(buildSessionContext(entries, e.id, byId));
	const labels = {};
	for (const e of entries) {
		const l = sm.getLabel(e.id);
		if (l !== undefined) labels[e.id] = l;
	}
	process.stdout.write(
		JSON.stringify({ leafId: sm.getLeafId(), context: pick(sm.buildSessionContext()), at, labels, count: entries.length }),
	);
} else if (cmd === "create") {
	const sm = SessionManager.create("/work/peer-project", arg);
	const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
	const assistant = (text, t) => ({ role: "assistant", content: [{ type: "text", text }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage, stopReason: "stop", timestamp: t });
	sm.appendModelChange("anthropic", "claude-sonnet-4-5");
	sm.appendThinkingLevelChange("low");
	const u1 = sm.appendMessage({ role: "user", content: "Find the bug", timestamp: 1 });
	const a1 = sm.appendMessage({ role: "assistant", content: [{ type: "thinking", thinking: "hmm", thinkingSignature: "sig" }, { type: "toolCall", id: "c1", name: "read", arguments: { path: "a.rs" } }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage, stopReason: "toolUse", timestamp: 2 });
	sm.appendMessage({ role: "toolResult", toolCallId: "c1", toolName: "read", content: [{ type: "text", text: "fn main() {}" }], isError: false, timestamp: 3 });
	const a2 = sm.appendMessage(assistant("It is in main.", 4));
	sm.appendLabelChange(u1, "question");
	sm.appendLabelChange(a2, "answer");
	sm.appendLabelChange(a2, undefined);
	sm.appendCustomEntry("peer.state", { n: 1 });
	sm.appendCustomMessageEntry("peer.note", [{ type: "text", text: "remember this" }], false, { k: true });
	sm.appendMessage({ role: "bashExecution", command: "ls", output: "a.rs", exitCode: 0, cancelled: false, truncated: false, timestamp: 5 });
	sm.appendCompaction("Looked for a bug in main.", a2, 4321, { readFiles: ["a.rs"] });
	sm.appendMessage({ role: "user", content: [{ type: "text", text: "Fix it" }], timestamp: 6 });
	sm.appendThinkingLevelChange("high");
	sm.appendMessage(assistant("Fixed.", 7));
	sm.appendSessionInfo("peer session");
	sm.branchWithSummary(a1, "Tried reading more files.", { why: "test" });
	sm.appendModelChange("openai", "gpt-5");
	sm.appendMessage({ role: "user", content: "Other way?", timestamp: 8 });
	sm.branch(u1);
	sm.appendMessage(assistant("Second answer.", 9));
	sm.resetLeaf();
	sm.appendMessage({ role: "user", content: "Fresh start", timestamp: 10 });
	sm.appendMessage(assistant("Hello again.", 11));
	sm.branchWithSummary(null, "From the root.");
	process.stdout.write(sm.getSessionFile());
} else if (cmd === "bench") {
	const runs = Number(extra ?? "1");
	let best = Infinity;
	let count = 0;
	for (let i = 0; i < runs; i++) {
		const t0 = process.hrtime.bigint();
		const sm = SessionManager.open(arg, undefined);
		const ctx = sm.buildSessionContext();
		const ms = Number(process.hrtime.bigint() - t0) / 1e6;
		best = Math.min(best, ms);
		count = ctx.messages.length;
	}
	process.stdout.write(JSON.stringify({ ms: best, messages: count, maxRssKiB: peakRssKiB() }));
} else {
	console.error(`unknown command ${cmd}`);
	process.exit(2);
}
