//! What the proxy knows of the server's tools: each tool's `inputSchema` and `outputSchema`,
//! compiled once from a `tools/list` page (draft 2020-12 unless the schema's `$schema`
//! names 2019-09 or draft-07; `$ref`s resolve only inside the schema, never over the
//! network), and forgotten on `notifications/tools/list_changed`.
//!
//! The server writes the schemas, so compiling them is work a hostile server chooses. A page
//! is therefore never compiled where the relay reads or decides messages: [`Tools::learn`]
//! only records each listed tool as [`Known::Compiling`] and returns the schema text as a
//! [`Job`]; the compile worker compiles it on a thread of its own, holding no lock, and the
//! relay's state lock is taken only to install the result ([`Tools::install`]). A page that
//! is not compiled within its deadline leaves its tools unusable (`schema_compile_timeout`);
//! calls to a tool that is still compiling wait for it, and are never forwarded unvalidated.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::message::{Message, ToolSpans};
use crate::json::Value;
use crate::{Limits, Schema};

/// Most tools remembered at once.
///
/// # Example
/// ```
/// use jsongate::mcp::{pin::MAX_LOCK_TOOLS, MAX_TOOLS};
/// assert_eq!(MAX_TOOLS, 10_000);
/// assert_eq!(MAX_LOCK_TOOLS, MAX_TOOLS); // a lockfile pins at most what the relay remembers
/// ```
pub const MAX_TOOLS: usize = 10_000;

/// Most listing pages waiting to be compiled (or compiling); the tools of a page past it are
/// unusable at once (`schema_compile_busy`).
///
/// # Example
/// ```
/// use jsongate::mcp::MAX_COMPILE_BACKLOG;
/// // A server that sends a 17th `tools/list` page while 16 still compile gets that page's
/// // tools marked `schema_compile_busy` (calls to them are refused) instead of a longer queue.
/// assert_eq!(MAX_COMPILE_BACKLOG, 16);
/// ```
pub const MAX_COMPILE_BACKLOG: usize = 16;

/// Default time a listing page may take from its arrival until its schemas are compiled.
///
/// # Example
/// ```
/// use std::time::Duration;
/// use jsongate::mcp::{Config, DEFAULT_COMPILE_DEADLINE};
/// assert_eq!(DEFAULT_COMPILE_DEADLINE, Duration::from_secs(10));
/// assert_eq!(Config::default().get_compile_deadline(), DEFAULT_COMPILE_DEADLINE);
/// let c = Config::default().compile_deadline(Duration::from_secs(30)); // `--compile-deadline-ms 30000`
/// assert_eq!(c.get_compile_deadline(), Duration::from_secs(30));
/// ```
pub const DEFAULT_COMPILE_DEADLINE: Duration = Duration::from_secs(10);

/// A tool whose schemas compiled.
#[derive(Debug)]
pub struct Tool {
    /// The tool's name.
    pub name: String,
    /// Its `inputSchema`.
    pub input: Schema,
    /// Its `outputSchema`, if it declares one.
    pub output: Option<Schema>,
    /// Its `inputSchema` as listed, kept only when the tool's definition was screened and
    /// nothing was found: refusals of its calls may then quote the schema's own names and
    /// constraints.
    pub screened_input: Option<Value>,
}

/// What the relay decided for one listed tool before it is learnt.
#[derive(Clone, Debug)]
pub enum Admit {
    /// Its schemas are compiled; `screened_input` as in [`Tool`].
    Use {
        /// The screened `inputSchema`, if the definition was clean.
        screened_input: Option<Value>,
    },
    /// It is refused with this class (calls to it too).
    Refuse(&'static str),
    /// It is not remembered at all (past the remembered-tools bound, or nameless).
    Skip,
}

/// A listed tool: usable, unusable with the reason (for operators; fixed text), or still
/// being compiled.
#[derive(Clone, Debug)]
pub enum Known {
    /// Its schemas compiled.
    Usable(Arc<Tool>),
    /// Calls to it are refused, with this class.
    Unusable(&'static str),
    /// Its schemas are being compiled by the job with this number; calls to it wait.
    Compiling(u64),
}

/// How schemas are compiled.
#[derive(Clone, Copy, Debug)]
pub struct CompileOptions {
    /// Whether `format` asserts.
    pub format_assertion: bool,
    /// The dialect of tool schemas without `$schema` (default: 2020-12).
    pub draft: Option<crate::Draft>,
    /// Evaluation budget per validated document, if not the default.
    pub eval_budget: Option<u64>,
    /// Limits for reading the schema text.
    pub limits: Limits,
}

/// The schemas of one listed tool, copied out of the page.
#[derive(Debug)]
struct Source {
    name: String,
    input: Vec<u8>,
    output: Option<Vec<u8>>,
    screened_input: Option<Value>,
}

/// One page's schemas, for the compile worker.
#[derive(Debug)]
pub struct Job {
    /// The job's number (what [`Known::Compiling`] names).
    pub seq: u64,
    /// [`Tools::generation`] when the page was read.
    pub generation: u64,
    /// When the page must be compiled by.
    pub deadline: Instant,
    tools: Vec<Source>,
}

impl Job {
    /// The names of the page's tools being compiled.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.name.as_str())
    }
}

/// What a finished (or abandoned) job installs.
#[derive(Debug)]
pub struct Outcome {
    /// The job's number.
    pub seq: u64,
    /// The generation it was read in (nothing is installed in another).
    pub generation: u64,
    /// Each tool and what is now known of it.
    pub tools: Vec<(String, Known)>,
}

/// The tools learnt so far.
#[derive(Debug, Default)]
pub struct Tools {
    map: HashMap<String, Known>,
    /// A listing of every page finished since the last `list_changed`.
    pub complete: bool,
    /// Bumped by every [`clear`](Self::clear): jobs of an earlier generation install nothing.
    pub generation: u64,
    next_job: u64,
}

impl Tools {
    /// What is known of `name`.
    pub fn get(&self, name: &str) -> Option<&Known> {
        self.map.get(name)
    }

    /// Forgets everything (`notifications/tools/list_changed`).
    pub fn clear(&mut self) {
        self.map.clear();
        self.complete = false;
        self.generation += 1;
    }

    /// How many tools are remembered.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Learns the tools of one `tools/list` page read from `line`, with the relay's decision
    /// for each (`admit`, one per item of `msg.tools`; missing entries are
    /// [`Admit::Use`] without a screened schema): tools that cannot be used are known at
    /// once; the others are [`Known::Compiling`] in the returned job, which the caller hands
    /// to the compile worker (or abandons, with [`Tools::install`]).
    pub fn learn(
        &mut self,
        msg: &Message,
        line: &[u8],
        deadline: Instant,
        admit: &[Admit],
    ) -> Option<Job> {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for t in &msg.tools {
            if let Some(n) = &t.name {
                *seen.entry(n).or_default() += 1;
            }
        }
        self.next_job += 1;
        let mut job = Job {
            seq: self.next_job,
            generation: self.generation,
            deadline,
            tools: Vec::new(),
        };
        let default = Admit::Use {
            screened_input: None,
        };
        for (i, t) in msg.tools.iter().enumerate() {
            let Some(name) = &t.name else { continue };
            if self.map.len() >= MAX_TOOLS && !self.map.contains_key(name) {
                // Past the cap, further tools stay unknown (calls to them are refused).
                continue;
            }
            let known = match admit.get(i).unwrap_or(&default) {
                Admit::Skip => continue,
                _ if seen[name.as_str()] > 1 => Known::Unusable("tool_listed_twice"),
                Admit::Refuse(class) => Known::Unusable(class),
                Admit::Use { screened_input } => match source(name, t, line) {
                    Ok(mut s) => {
                        s.screened_input.clone_from(screened_input);
                        job.tools.push(s);
                        Known::Compiling(job.seq)
                    }
                    Err(class) => Known::Unusable(class),
                },
            };
            self.map.insert(name.clone(), known);
        }
        (!job.tools.is_empty()).then_some(job)
    }

    /// Installs what a job found, for the tools still waiting for that job (a later page or
    /// a `list_changed` may have replaced them). Returns whether anything changed.
    pub fn install(&mut self, outcome: Outcome) -> bool {
        if outcome.generation != self.generation {
            return false;
        }
        let mut changed = false;
        for (name, known) in outcome.tools {
            if let Some(k) = self.map.get_mut(&name) {
                if matches!(k, Known::Compiling(s) if *s == outcome.seq) {
                    *k = known;
                    changed = true;
                }
            }
        }
        changed
    }
}

/// The schema text of a listed tool, or why it cannot be used.
fn source(name: &str, t: &ToolSpans, line: &[u8]) -> Result<Source, &'static str> {
    if t.bad_schema {
        return Err("schema_not_object");
    }
    let Some((a, b)) = t.input else {
        return Err("no_input_schema");
    };
    Ok(Source {
        name: name.to_owned(),
        input: line[a..b].to_vec(),
        output: t.output.map(|(a, b)| line[a..b].to_vec()),
        screened_input: None,
    })
}

/// Compiles one tool's schemas.
fn compile(s: &Source, opts: CompileOptions) -> Known {
    let mut o = Schema::options()
        .format_assertion(opts.format_assertion)
        .limits(opts.limits);
    if let Some(d) = opts.draft {
        o = o.draft(d);
    }
    if let Some(b) = opts.eval_budget {
        o = o.eval_budget(b);
    }
    let Ok(input) = o.compile(&s.input) else {
        return Known::Unusable("input_schema_unusable");
    };
    let output = match s.output.as_deref().map(|b| o.compile(b)) {
        None => None,
        Some(Ok(s)) => Some(s),
        Some(Err(_)) => return Known::Unusable("output_schema_unusable"),
    };
    Known::Usable(Arc::new(Tool {
        name: s.name.clone(),
        input,
        output,
        screened_input: s.screened_input.clone(),
    }))
}

/// The outcome of a job that was not compiled: each of its tools unusable with `class`.
pub fn abandon(job: &Job, class: &'static str) -> Outcome {
    Outcome {
        seq: job.seq,
        generation: job.generation,
        tools: job
            .names()
            .map(|n| (n.to_owned(), Known::Unusable(class)))
            .collect(),
    }
}

/// Work for the compile coordinator.
pub(super) enum Work {
    /// A page to compile.
    Job(Job),
    /// The worker finished a job.
    Done(Outcome),
    /// The relay ends.
    Close,
}

/// A running compile worker: where jobs go, and how many are waiting.
pub(super) struct Compiler {
    pub(super) queue: Sender<Work>,
    /// Jobs submitted and not finished or abandoned yet.
    pub(super) backlog: Arc<AtomicUsize>,
}

impl Compiler {
    /// Hands `job` to the worker; when [`MAX_COMPILE_BACKLOG`] jobs are waiting already,
    /// returns it abandoned (`schema_compile_busy`) instead.
    pub(super) fn submit(&self, job: Job) -> Result<(), Outcome> {
        if self.backlog.fetch_add(1, Ordering::SeqCst) >= MAX_COMPILE_BACKLOG {
            self.backlog.fetch_sub(1, Ordering::SeqCst);
            return Err(abandon(&job, "schema_compile_busy"));
        }
        match self.queue.send(Work::Job(job)) {
            Ok(()) => Ok(()),
            Err(std::sync::mpsc::SendError(w)) => {
                self.backlog.fetch_sub(1, Ordering::SeqCst);
                match w {
                    Work::Job(job) => Err(abandon(&job, "schema_compile_busy")),
                    _ => Ok(()),
                }
            }
        }
    }
}

/// A compile queue (the coordinator is started with [`spawn`] once the relay's shared state,
/// which holds the queue, exists).
pub(super) fn compiler() -> (Compiler, Receiver<Work>) {
    let (queue, work) = channel();
    let backlog = Arc::new(AtomicUsize::new(0));
    (Compiler { queue, backlog }, work)
}

/// Starts the compile coordinator and its worker for `compiler`'s queue. `install` runs (on
/// the coordinator's thread) for every job that finished or missed its deadline. The
/// coordinator ends on [`Work::Close`], after the worker: the worker starts no further job
/// and ends once the job it is compiling (if any) is done, which the compile budgets bound,
/// so no thread outlives the relay.
pub(super) fn spawn(
    compiler: &Compiler,
    work: Receiver<Work>,
    opts: CompileOptions,
    install: impl Fn(Outcome) + Send + 'static,
) -> std::io::Result<JoinHandle<()>> {
    let (to_worker, jobs) = channel::<Job>();
    let done = compiler.queue.clone();
    let closing = Arc::new(AtomicBool::new(false));
    let stop = Arc::clone(&closing);
    let worker = std::thread::Builder::new()
        .name("mcp-compile".into())
        .spawn(move || {
            for job in jobs {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let tools = job
                    .tools
                    .iter()
                    .map(|s| (s.name.clone(), compile(s, opts)))
                    .collect();
                let outcome = Outcome {
                    seq: job.seq,
                    generation: job.generation,
                    tools,
                };
                if done.send(Work::Done(outcome)).is_err() {
                    return;
                }
            }
        })?;
    let backlog = Arc::clone(&compiler.backlog);
    std::thread::Builder::new()
        .name("mcp-compile-deadlines".into())
        .spawn(move || {
            coordinate(&work, &to_worker, &backlog, &install);
            closing.store(true, Ordering::Relaxed);
            drop(to_worker);
            let _ = worker.join();
        })
}

/// The job the worker is compiling, and whether it was abandoned at its deadline already.
struct Busy {
    seq: u64,
    generation: u64,
    deadline: Instant,
    names: Vec<String>,
    abandoned: bool,
}

/// Keeps the worker fed one job at a time and abandons every job whose deadline passes,
/// whether it is waiting or compiling.
fn coordinate(
    work: &Receiver<Work>,
    to_worker: &Sender<Job>,
    backlog: &AtomicUsize,
    install: &dyn Fn(Outcome),
) {
    let mut waiting: VecDeque<Job> = VecDeque::new();
    let mut busy: Option<Busy> = None;
    loop {
        let now = Instant::now();
        // Jobs whose deadline passed while they waited are abandoned; the next is started.
        waiting.retain(|j| {
            let keep = now < j.deadline;
            if !keep {
                backlog.fetch_sub(1, Ordering::SeqCst);
                install(abandon(j, "schema_compile_timeout"));
            }
            keep
        });
        if busy.is_none() {
            if let Some(job) = waiting.pop_front() {
                busy = Some(Busy {
                    seq: job.seq,
                    generation: job.generation,
                    deadline: job.deadline,
                    names: job.names().map(str::to_owned).collect(),
                    abandoned: false,
                });
                if to_worker.send(job).is_err() {
                    return;
                }
            }
        }
        let next = waiting
            .iter()
            .map(|j| j.deadline)
            .chain(busy.iter().filter(|b| !b.abandoned).map(|b| b.deadline))
            .min();
        let got = match next {
            Some(d) => work.recv_timeout(d.saturating_duration_since(now)),
            None => work.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match got {
            Ok(Work::Job(j)) => waiting.push_back(j),
            Ok(Work::Done(outcome)) => {
                // The outcome of a job abandoned at its deadline installs nothing: its tools
                // are unusable already.
                if busy.take().is_some_and(|b| !b.abandoned) {
                    backlog.fetch_sub(1, Ordering::SeqCst);
                    install(outcome);
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                if let Some(b) = busy.as_mut().filter(|b| !b.abandoned) {
                    if Instant::now() >= b.deadline {
                        // The worker goes on compiling it (a compile cannot be interrupted);
                        // no other job starts before it is done.
                        b.abandoned = true;
                        backlog.fetch_sub(1, Ordering::SeqCst);
                        install(Outcome {
                            seq: b.seq,
                            generation: b.generation,
                            tools: b
                                .names
                                .iter()
                                .map(|n| (n.clone(), Known::Unusable("schema_compile_timeout")))
                                .collect(),
                        });
                    }
                }
            }
            Ok(Work::Close) | Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}
