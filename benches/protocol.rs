//! Throughput of the bolt protocol parser on synthetic model answers of 1 MB
//! and 4 MB (`response-1mb.txt`, `response-4mb.txt`), fed in one call and in
//! 20-character chunks, through `push` (events collected per call) and
//! `push_with` (each event handed on as it is made). Reports MB/s, then how
//! much the 4 MB input costs against the 1 MB one.
//!
//! The inputs are read from `RIVET_BENCH_DIR`, else from `../shared/bench`
//! beside the repository, else from `/work/shared/bench`.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use rivet::runtime::protocol::{Event, Parser};

const INPUTS: [&str; 2] = ["response-1mb", "response-4mb"];
const CHUNK_CHARS: usize = 20;

fn bench_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("RIVET_BENCH_DIR") {
        return dir.into();
    }
    let beside = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/bench");
    if beside.is_dir() {
        beside
    } else {
        PathBuf::from("/work/shared/bench")
    }
}

fn read_input(name: &str) -> String {
    let path = bench_dir().join(format!("{name}.txt"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; set RIVET_BENCH_DIR to the folder of the inputs",
            path.display()
        )
    })
}

/// The message cut into chunks of `chars` characters (`None`: one chunk).
/// Offsets, not slices, keep the cut list small beside the input.
struct Chunks<'a> {
    input: &'a str,
    ends: Vec<u32>,
}

impl<'a> Chunks<'a> {
    fn new(input: &'a str, chars: Option<usize>) -> Chunks<'a> {
        let mut ends: Vec<u32> = match chars {
            Some(n) => input
                .char_indices()
                .skip(n)
                .step_by(n)
                .map(|(i, _)| u32::try_from(i).expect("input under 4 GB"))
                .collect(),
            None => Vec::new(),
        };
        ends.push(u32::try_from(input.len()).expect("input under 4 GB"));
        Chunks { input, ends }
    }

    fn each(&self, mut f: impl FnMut(&str)) {
        let mut start = 0;
        for &end in &self.ends {
            f(&self.input[start..end as usize]);
            start = end as usize;
        }
    }
}

/// What a consumer does with an event, at the least: look at it.
fn weigh(event: &Event) -> usize {
    match event {
        Event::Text { text } => text.len(),
        Event::ActionDelta { delta, .. } => delta.len(),
        Event::ActionClose { action, .. } => action.content.len(),
        _ => 1,
    }
}

fn parse_push(chunks: &Chunks) -> usize {
    let mut parser = Parser::new("bench");
    let mut weight = 0;
    chunks.each(|chunk| weight += parser.push(chunk).map(|e| weigh(&e)).sum::<usize>());
    weight + parser.finish().iter().map(weigh).sum::<usize>()
}

fn parse_push_with(chunks: &Chunks) -> usize {
    let mut parser = Parser::new("bench");
    let mut weight = 0;
    chunks.each(|chunk| parser.push_with(chunk, |e| weight += weigh(&e)));
    parser.finish_with(|e| weight += weigh(&e));
    weight
}

type ParseFn = fn(&Chunks) -> usize;
const APIS: [(&str, ParseFn); 2] = [("push", parse_push), ("push_with", parse_push_with)];
const MODES: [(&str, Option<usize>); 2] = [("one-call", None), ("chunks-20", Some(CHUNK_CHARS))];

fn throughput(c: &mut Criterion, inputs: &[(&str, String)]) {
    let mut group = c.benchmark_group("protocol");
    group.measurement_time(Duration::from_secs(4));
    for (name, input) in inputs {
        group.throughput(Throughput::BytesDecimal(input.len() as u64));
        for (mode, chars) in MODES {
            let chunks = Chunks::new(input, chars);
            for (api, parse) in APIS {
                group.bench_with_input(
                    BenchmarkId::new(format!("{api}/{mode}"), name),
                    &chunks,
                    |b, chunks| b.iter(|| black_box(parse(black_box(chunks)))),
                );
            }
        }
    }
    group.finish();
}

/// The cost of the 4 MB input over the 1 MB one: the best of interleaved
/// runs, so both see the same machine load.
fn cost_ratio(inputs: &[(&str, String)]) {
    const ROUNDS: usize = 30;
    for (mode, chars) in MODES {
        for (api, parse) in APIS {
            let chunks: Vec<Chunks> = inputs.iter().map(|(_, i)| Chunks::new(i, chars)).collect();
            let mut best = vec![Duration::MAX; chunks.len()];
            for _ in 0..ROUNDS {
                for (chunks, best) in chunks.iter().zip(&mut best) {
                    let start = Instant::now();
                    black_box(parse(black_box(chunks)));
                    *best = (*best).min(start.elapsed());
                }
            }
            let mbps: Vec<String> = inputs
                .iter()
                .zip(&best)
                .map(|((name, input), t)| {
                    format!(
                        "{name} {:.0} MB/s",
                        input.len() as f64 / t.as_secs_f64() / 1e6
                    )
                })
                .collect();
            println!(
                "protocol {api}/{mode}: {}; 4 MB costs {:.2}x the 1 MB input (size ratio {:.2})",
                mbps.join(", "),
                best[1].as_secs_f64() / best[0].as_secs_f64(),
                inputs[1].1.len() as f64 / inputs[0].1.len() as f64,
            );
        }
    }
}

fn main() {
    let inputs: Vec<(&str, String)> = INPUTS.iter().map(|n| (*n, read_input(n))).collect();
    let mut criterion = Criterion::default().configure_from_args();
    throughput(&mut criterion, &inputs);
    criterion.final_summary();
    cost_ratio(&inputs);
}
