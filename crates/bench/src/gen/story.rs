//! Plausible conversations for demos: a handful of everyday coding tasks,
//! each a few turns of a prompt, the model's thinking, tool calls with
//! believable output, and an answer. Search benchmarks use the vocabulary
//! generator instead (words of every frequency); demos read these.

/// One tool call of a scripted turn: kind (`bash`, `read`, `edit`,
/// `grep`), argument, output.
pub type Call = (&'static str, &'static str, &'static str);

/// One scripted turn.
pub struct Beat {
    /// The prompt.
    pub user: &'static str,
    /// The model's thinking.
    pub thinking: &'static str,
    /// Tool calls.
    pub calls: &'static [Call],
    /// The answer.
    pub answer: &'static str,
}

/// One scripted task: its turns, and a prompt that rephrases the last
/// one (the user edited it and asked again: a branch in the session tree).
pub struct Story {
    /// The turns in order.
    pub beats: &'static [Beat],
    /// The rephrased last prompt, asked again from the same point.
    pub retry: &'static str,
}

/// The scripted tasks.
pub const STORIES: &[Story] = &[
    Story {
        beats: &[
            Beat {
                user: "The tokenizer panics on input with emoji. Can you find out why and fix it?",
                thinking: "A panic on emoji usually means byte indexing into a str. Let me look at how the lexer advances.",
                calls: &[
                    ("bash", "cargo test -p lexer", "running 14 tests\ntest unicode_identifiers ... FAILED\n\nthread 'unicode_identifiers' panicked at src/lexer.rs:88:23:\nbyte index 3 is not a char boundary; it is inside '🦀' (bytes 2..6)\n\ntest result: FAILED. 13 passed; 1 failed"),
                    ("read", "src/lexer.rs", "fn bump(&mut self) -> Option<char> {\n    let c = self.src[self.pos..].chars().next()?;\n    self.pos += 1;\n    Some(c)\n}"),
                ],
                answer: "The lexer advances `pos` by one byte per character, so any multi-byte character (emoji, accented letters) leaves it inside a character and the next slice panics. I changed `bump` to advance by `c.len_utf8()`.",
            },
            Beat {
                user: "Add a regression test with a few non-ASCII identifiers and run the whole suite.",
                thinking: "Cover a 2-byte, a 3-byte and a 4-byte character so each width is exercised.",
                calls: &[
                    ("edit", "tests/unicode.rs", "The file tests/unicode.rs has been updated."),
                    ("bash", "cargo test --workspace", "test result: ok. 15 passed; 0 failed; 0 ignored"),
                ],
                answer: "Added `unicode_identifiers_of_every_width` (é, 中, 🦀). All 15 tests pass.",
            },
        ],
        retry: "Add a property test instead that feeds random UTF-8 strings to the lexer.",
    },
    Story {
        beats: &[
            Beat {
                user: "The /api/orders endpoint got slow after yesterday's deploy. p95 went from 80 ms to 1.2 s. Please investigate.",
                thinking: "Start from what changed in the deploy, then look at the queries the handler makes.",
                calls: &[
                    ("bash", "git log --oneline -5", "a41c9e2 orders: include line items in the list response\n7b2d013 bump axum to 0.7.5\n1f0e8aa ci: cache cargo registry"),
                    ("grep", "line_items", "src/orders/list.rs:42: for order in &orders { order.line_items = repo.line_items(order.id).await?; }"),
                ],
                answer: "The deploy added line items to the list response with one query per order (an N+1): 50 orders per page means 51 queries. I'll batch them into one `WHERE order_id = ANY($1)` query.",
            },
            Beat {
                user: "Do it, and add an index if the query needs one.",
                thinking: "EXPLAIN the batched query; order_id on line_items probably has no index yet.",
                calls: &[
                    ("edit", "src/orders/list.rs", "The file src/orders/list.rs has been updated."),
                    ("bash", "psql -c 'EXPLAIN ANALYZE SELECT * FROM line_items WHERE order_id = ANY($1)'", "Seq Scan on line_items  (cost=0.00..18334.00 rows=52 width=64) (actual time=0.02..41.2 ms)"),
                    ("edit", "migrations/0042_line_items_order_id.sql", "The file migrations/0042_line_items_order_id.sql has been updated."),
                ],
                answer: "Line items now load in one query, and migration 0042 adds an index on `line_items(order_id)`. Locally the page takes 9 ms instead of 640 ms.",
            },
        ],
        retry: "Use a JOIN in the original query instead of a second query.",
    },
    Story {
        beats: &[
            Beat {
                user: "CI fails on main with a flaky test in the scheduler crate. Can you make it deterministic?",
                thinking: "Flaky scheduler tests are usually sleeps racing a timer. Check how the test waits.",
                calls: &[
                    ("read", "crates/scheduler/tests/retry.rs", "#[tokio::test]\nasync fn retries_three_times() {\n    let s = Scheduler::new();\n    s.submit(job_that_fails());\n    tokio::time::sleep(Duration::from_millis(350)).await;\n    assert_eq!(s.attempts(), 3);\n}"),
                ],
                answer: "The test sleeps 350 ms and hopes three retries (100 ms apart) happened. On a loaded CI runner they sometimes have not. I switched it to tokio's paused clock (`start_paused = true`) and `advance`, so time only moves when the test says so.",
            },
            Beat {
                user: "Run it 200 times to be sure.",
                thinking: "A loop in the shell is enough.",
                calls: &[(
                    "bash",
                    "for i in $(seq 200); do cargo test -q -p scheduler retries || break; done",
                    "test result: ok. 1 passed (x200)",
                )],
                answer: "200 runs, no failure.",
            },
        ],
        retry: "Keep real time but wait on the attempt counter with a timeout instead.",
    },
    Story {
        beats: &[
            Beat {
                user: "Write a migration that renames users.name to users.display_name without downtime.",
                thinking: "Zero-downtime rename: add the new column, dual-write, backfill, switch reads, drop later.",
                calls: &[("read", "migrations/0017_users.sql", "CREATE TABLE users (id bigserial PRIMARY KEY, name text NOT NULL, email text UNIQUE NOT NULL);")],
                answer: "Three steps: 0043 adds `display_name` and a trigger copying `name` into it; 0044 backfills in batches of 10,000; after the app reads `display_name`, 0045 drops the trigger and `name`.",
            },
            Beat {
                user: "Show me the backfill.",
                thinking: "Batch by id range to keep transactions short.",
                calls: &[("edit", "migrations/0044_backfill_display_name.sql", "The file migrations/0044_backfill_display_name.sql has been updated.")],
                answer: "It updates 10,000 rows per transaction by id range and sleeps 50 ms between batches so replication keeps up.",
            },
        ],
        retry: "Can we do it with a view instead of a trigger?",
    },
    Story {
        beats: &[
            Beat {
                user: "Our React list re-renders every row when one item changes. Can you fix the memoization?",
                thinking: "Likely an inline callback or object prop defeating React.memo.",
                calls: &[("grep", "onSelect=", "src/components/OrderList.tsx:31: <OrderRow key={o.id} order={o} onSelect={() => select(o.id)} />")],
                answer: "Each render creates a new `onSelect` closure per row, so `React.memo(OrderRow)` never sees equal props. I pass `select` and the id separately and wrapped `select` in `useCallback`.",
            },
            Beat {
                user: "Verify with the profiler numbers.",
                thinking: "Run the interaction test with the profiler enabled.",
                calls: &[("bash", "npm run test:perf -- OrderList", "OrderList: select one of 500 rows: 3 rows rendered (was 500), 4.1 ms (was 96 ms)")],
                answer: "Selecting one row now renders 3 components instead of 500: 4 ms instead of 96 ms.",
            },
        ],
        retry: "Use a context for the selection instead of passing callbacks.",
    },
    Story {
        beats: &[
            Beat {
                user: "Add a --json flag to the `report` command so scripts can read it.",
                thinking: "The report struct already derives Serialize; the flag only picks the printer.",
                calls: &[
                    ("read", "src/commands/report.rs", "pub struct Args { pub since: Option<String> }\n\npub fn run(args: Args) -> Result<()> { let r = build(&args)?; print_table(&r) }"),
                    ("edit", "src/commands/report.rs", "The file src/commands/report.rs has been updated."),
                    ("bash", "cargo run -- report --json | jq '.rows | length'", "12"),
                ],
                answer: "`report --json` prints the report as one JSON document; the table stays the default.",
            },
        ],
        retry: "Print JSON Lines, one row per line, instead.",
    },
];
