//! Vocabulary for generated sessions: prose and code words in rough order of
//! frequency, so searches find words of every frequency from "the" (in
//! nearly every entry) to rare identifiers (in a handful).

use rand::Rng;

/// Prose words, most frequent first.
#[rustfmt::skip]
pub const PROSE: &[&str] = &[
    "the", "to", "and", "a", "of", "in", "is", "it", "that", "for", "this", "with", "on", "be",
    "we", "can", "you", "not", "are", "from", "file", "function", "test", "now", "should",
    "error", "check", "add", "use", "when", "so", "code", "let", "me", "will", "fix", "then",
    "need", "run", "all", "if", "value", "change", "new", "type", "make", "update", "read",
    "case", "first", "call", "returns", "looks", "like", "because", "instead", "which",
    "before", "after", "there", "only", "still", "each", "one", "also", "same", "into",
    "module", "config", "build", "tests", "output", "input", "path", "line", "missing",
    "failing", "passes", "works", "handle", "empty", "string", "list", "result", "option",
    "parser", "request", "response", "server", "client", "database", "query", "index", "cache",
    "token", "session", "user", "message", "event", "stream", "buffer", "writer", "reader",
    "thread", "lock", "async", "timeout", "retry", "limit", "schema", "migration", "version",
    "release", "deploy", "docker", "container", "pipeline", "workflow", "branch", "commit",
    "merge", "rebase", "review", "comment", "warning", "panic", "crash", "leak", "memory",
    "performance", "latency", "benchmark", "profile", "trace", "logging", "metrics",
    "dashboard", "endpoint", "router", "handler", "middleware", "authentication",
    "authorization", "permission", "secret", "credential", "certificate", "encryption",
    "compression", "serialization", "deserialize", "validation", "sanitize", "escape",
    "unicode", "encoding", "timezone", "timestamp", "duration", "interval", "scheduler",
    "queue", "worker", "batch", "transaction", "rollback", "snapshot", "checkpoint", "recovery",
    "replica", "shard", "partition", "consensus", "heartbeat", "lease", "tokenizer", "lexer",
    "grammar", "syntax", "semantic", "borrow", "checker", "lifetime", "generic", "trait",
    "closure", "iterator", "allocation", "regression", "flaky", "deterministic", "idempotent",
    "backpressure", "throttle", "debounce", "hydration", "reconciler", "virtualization",
    "memoize", "invalidation", "eviction", "fragmentation", "quadratic", "amortized",
    "monotonic", "linearizable", "tombstone", "compaction", "watermark", "bloom", "trie",
    "arena", "slab", "epoch", "hazard", "seqlock", "nightly", "bisect", "cherry", "squash",
    "vendored", "monorepo", "codegen", "protobuf", "grpc", "websocket", "graphql", "kafka",
    "redis", "postgres", "sqlite", "clickhouse", "terraform", "kubernetes", "helm", "nginx",
    "envoy", "istio", "prometheus", "grafana", "wasm", "webgpu", "shader", "vulkan", "simd",
    "avx", "neon", "riscv", "fpga",
];

/// Code words: identifiers, keywords and library names.
#[rustfmt::skip]
pub const CODE: &[&str] = &[
    "fn", "let", "mut", "pub", "impl", "struct", "enum", "match", "return", "self", "Self",
    "Some", "None", "Ok", "Err", "Result", "Option", "Vec", "String", "HashMap", "Arc", "Mutex",
    "async", "await", "const", "static", "use", "mod", "crate", "where", "dyn", "import",
    "export", "from", "class", "def", "function", "interface", "type", "extends", "new", "this",
    "null", "undefined", "true", "false", "if", "else", "for", "while", "parse_config",
    "load_settings", "handle_request", "spawn_worker", "flush_buffer", "read_line", "write_all",
    "serialize", "deserialize", "into_iter", "unwrap_or_default", "useEffect", "useState",
    "fetchData", "renderItem", "onClick", "setState", "getElementById", "parseArgs",
    "runMigration", "openDatabase", "closeConnection", "retryWithBackoff", "validateInput",
    "normalizePath", "computeHash", "encodeBase64", "decodeToken", "tokio", "serde", "axum",
    "reqwest", "clap", "anyhow", "thiserror", "tracing", "rayon", "react", "express", "fastapi",
    "pydantic", "numpy", "pandas", "pytest", "jest", "vitest",
];

/// Project names (directories under `/home/dev/src`).
#[rustfmt::skip]
pub const PROJECTS: &[&str] = &[
    "webapp", "parser", "infra", "billing-service", "mobile-app", "data-pipeline", "cli-tool",
    "docs-site", "auth-gateway", "search-engine", "game-engine", "ml-training", "payments",
    "notifications", "scheduler", "compiler", "kv-store", "dashboard", "etl-jobs", "sdk-python",
    "sdk-rust", "terraform-modules", "design-system", "chat-backend", "video-encoder",
    "crawler", "analytics", "inventory", "geo-service", "ledger",
];

/// Source file names.
#[rustfmt::skip]
pub const FILES: &[&str] = &[
    "src/main.rs", "src/lib.rs", "src/config.rs", "src/parser.rs", "src/lexer.rs",
    "src/server.rs", "src/handlers/mod.rs", "src/db/schema.rs", "src/cache.rs", "src/index.ts",
    "src/App.tsx", "src/api/client.ts", "src/components/Button.tsx", "src/hooks/useSession.ts",
    "app/models.py", "app/views.py", "app/tests/test_api.py", "cmd/server/main.go",
    "internal/store/store.go", "Cargo.toml", "package.json", "pyproject.toml", "Dockerfile",
    "Makefile", ".github/workflows/ci.yml", "README.md", "migrations/0001_init.sql",
    "tests/integration.rs", "benches/throughput.rs",
];

/// Shell commands.
#[rustfmt::skip]
pub const COMMANDS: &[&str] = &[
    "cargo test", "cargo build --release", "cargo clippy --all-targets -- -D warnings",
    "npm test", "npm run build", "pnpm lint", "pytest -x -q", "go test ./...", "git status",
    "git diff --stat", "git log --oneline -5", "ls -la", "rg -n TODO src", "make check",
    "docker compose up -d", "kubectl get pods", "terraform plan",
];

/// Returns an index in `0..n` skewed towards small values (Zipf-like).
pub fn skewed(rng: &mut impl Rng, n: usize) -> usize {
    let u: f64 = rng.gen();
    ((u * u * u) * n as f64) as usize % n.max(1)
}

/// Returns a word of prose.
pub fn prose_word(rng: &mut impl Rng) -> &'static str {
    PROSE[skewed(rng, PROSE.len())]
}

/// Appends `n` words of prose as sentences.
pub fn sentence_into(rng: &mut impl Rng, out: &mut String, n: usize) {
    let mut cap = true;
    for i in 0..n {
        if i > 0 {
            out.push(' ');
        }
        let w = if rng.gen_ratio(1, 12) {
            CODE[skewed(rng, CODE.len())]
        } else if rng.gen_ratio(1, 400) {
            // A rare identifier: few entries contain any given one.
            out.push_str("zq");
            out.push_str(&format!("{:x}", rng.gen_range(0u32..40_000)));
            continue;
        } else {
            prose_word(rng)
        };
        if cap {
            let mut c = w.chars();
            if let Some(f) = c.next() {
                out.extend(f.to_uppercase());
                out.push_str(c.as_str());
            }
            cap = false;
        } else {
            out.push_str(w);
        }
        if rng.gen_ratio(1, 14) {
            out.push('.');
            cap = true;
        } else if rng.gen_ratio(1, 20) {
            out.push(',');
        }
    }
    out.push('.');
}

/// Returns `n` words of prose.
pub fn prose(rng: &mut impl Rng, n: usize) -> String {
    let mut s = String::with_capacity(n * 7);
    sentence_into(rng, &mut s, n);
    s
}

/// Returns `lines` lines of code-like text.
pub fn code(rng: &mut impl Rng, lines: usize) -> String {
    let mut s = String::with_capacity(lines * 40);
    for _ in 0..lines {
        let indent = rng.gen_range(0..4) * 4;
        s.extend(std::iter::repeat_n(' ', indent));
        let n = rng.gen_range(2..9);
        for j in 0..n {
            if j > 0 {
                s.push(' ');
            }
            s.push_str(CODE[skewed(rng, CODE.len())]);
            match rng.gen_range(0..8) {
                0 => s.push_str("()"),
                1 => s.push(';'),
                2 => s.push_str(" ="),
                3 => s.push('.'),
                _ => {}
            }
        }
        s.push('\n');
    }
    s
}

/// Picks one of `items`.
pub fn pick<'a>(rng: &mut impl Rng, items: &[&'a str]) -> &'a str {
    items[rng.gen_range(0..items.len())]
}
