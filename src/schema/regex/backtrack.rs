//! The backtracking matcher for ECMA-262 patterns that need look-around or backreferences.
//!
//! This module owns compiling the parsed pattern into a small instruction list and running it
//! with ECMA-262's own semantics: captures inside a quantified group are reset on every
//! iteration, an iteration that matches the empty string once the minimum is met fails,
//! look-arounds are atomic, look-behinds match right to left (so backreferences inside them
//! work), and a backreference to a group that has not matched matches the empty string.
//!
//! It must never hang or grow without bound: every executed instruction and every retried
//! alternative costs one step from a budget, and the backtracking and undo stacks are capped;
//! either running out gives [`BudgetExceeded`]. Recursion happens only for nested
//! look-arounds, whose depth the parser bounds.

use super::{emit_set, BudgetExceeded, Node, RegexError, Set, WORD};

/// Most entries the backtracking stack and the undo log may each hold.
const MAX_STACK: usize = 1 << 20;
/// Most instructions a program may have.
const MAX_PROGRAM: usize = 1 << 16;
/// Sorted, merged, inclusive code point ranges.
type Ranges = Box<[(u32, u32)]>;
/// Register value for "capture not set".
const UNSET: usize = usize::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    Forward,
    Backward,
}

/// What one simple (single character) repetition matches.
#[derive(Clone, Copy, Debug)]
enum One {
    Char(char),
    Set(usize),
}

#[derive(Clone, Debug)]
enum Inst {
    /// The whole pattern matched.
    Match,
    /// A look-around body matched.
    LookEnd,
    Fail,
    One(One, Dir),
    Start,
    End,
    WordBoundary {
        negated: bool,
    },
    /// Continue at `pc + 1`; on failure, resume at `alt`.
    Split {
        alt: usize,
    },
    Jmp(usize),
    /// Register `slot` := current position.
    Save(usize),
    Backref {
        group: usize,
        dir: Dir,
    },
    Look {
        behind: bool,
        negated: bool,
        /// Where the look-around's body (ending in `LookEnd`) starts.
        body: usize,
        next: usize,
    },
    /// A repetition of one character: as many (greedy) or as few (lazy) as allowed.
    Repeat1 {
        one: One,
        dir: Dir,
        min: usize,
        max: usize,
        greedy: bool,
    },
    /// Counter register := 0.
    RepInit {
        reg: usize,
    },
    /// Decide whether to run the body (at `pc + 1`) again or leave (to `exit`).
    RepLoop {
        reg: usize,
        min: usize,
        max: usize,
        greedy: bool,
        exit: usize,
    },
    /// An iteration starts: remember the position, reset the body's capture registers.
    RepEnter {
        reg: usize,
        clear: (usize, usize),
    },
    /// An iteration ends: fail if it matched empty once the minimum was met, else count it.
    RepEnd {
        reg: usize,
        min: usize,
        head: usize,
    },
}

#[derive(Clone, Debug)]
pub(super) struct Program {
    insts: Box<[Inst]>,
    /// Sorted, merged code point ranges of every set the program tests.
    sets: Box<[Ranges]>,
    registers: usize,
    /// The pattern starts with `^`: only a search from offset 0 can match.
    anchored: bool,
    /// Every match starts with this character test: skip offsets where it fails.
    first: Option<One>,
    budget: usize,
}

struct Compiler {
    insts: Vec<Inst>,
    sets: Vec<Ranges>,
    registers: usize,
}

/// The capture groups inside `node`, as the range of their register slots.
fn capture_slots(node: &Node) -> Option<(usize, usize)> {
    fn walk(node: &Node, lo: &mut usize, hi: &mut usize) {
        match node {
            Node::Group { capture, body } => {
                if let Some(k) = capture {
                    let k = *k as usize;
                    *lo = (*lo).min(2 * k);
                    *hi = (*hi).max(2 * k + 2);
                }
                walk(body, lo, hi);
            }
            Node::Look { body, .. } | Node::Repeat { body, .. } => walk(body, lo, hi),
            Node::Concat(nodes) | Node::Alt(nodes) => {
                for n in nodes {
                    walk(n, lo, hi);
                }
            }
            _ => {}
        }
    }
    let (mut lo, mut hi) = (usize::MAX, 0);
    walk(node, &mut lo, &mut hi);
    (lo < hi).then_some((lo, hi))
}

impl Compiler {
    fn push(&mut self, inst: Inst) -> Result<usize, RegexError> {
        if self.insts.len() >= MAX_PROGRAM {
            return Err(RegexError::TooBig(format!(
                "backtracking program exceeds {MAX_PROGRAM} instructions"
            )));
        }
        self.insts.push(inst);
        Ok(self.insts.len() - 1)
    }

    fn set(&mut self, set: &Set) -> Result<usize, RegexError> {
        let mut class = String::new();
        emit_set(set, &mut class);
        let hir = regex_syntax::ParserBuilder::new()
            .build()
            .parse(&class)
            .map_err(|e| RegexError::Unsupported(super::last_line(&e.to_string())))?;
        let ranges: Ranges = match hir.kind() {
            regex_syntax::hir::HirKind::Class(regex_syntax::hir::Class::Unicode(c)) => c
                .ranges()
                .iter()
                .map(|r| (u32::from(r.start()), u32::from(r.end())))
                .collect(),
            regex_syntax::hir::HirKind::Class(regex_syntax::hir::Class::Bytes(c)) => c
                .ranges()
                .iter()
                .map(|r| (u32::from(r.start()), u32::from(r.end())))
                .collect(),
            regex_syntax::hir::HirKind::Literal(lit) => {
                match std::str::from_utf8(&lit.0)
                    .ok()
                    .and_then(|s| s.chars().next())
                {
                    Some(c) => Box::new([(u32::from(c), u32::from(c))]),
                    None => Box::default(),
                }
            }
            _ => {
                return Err(RegexError::Unsupported(
                    "unexpected character class".to_owned(),
                ))
            }
        };
        self.sets.push(ranges);
        Ok(self.sets.len() - 1)
    }

    fn one(&mut self, node: &Node) -> Result<Option<One>, RegexError> {
        Ok(match node {
            Node::Char(c) => Some(match char::from_u32(*c) {
                Some(ch) => One::Char(ch),
                // A lone surrogate: the empty set.
                None => One::Set(self.set(&Set::default())?),
            }),
            Node::Set(s) => Some(One::Set(self.set(s)?)),
            _ => None,
        })
    }

    // One arm per syntax-tree node, each emitting its instructions.
    #[allow(clippy::too_many_lines)]
    fn node(&mut self, node: &Node, dir: Dir) -> Result<(), RegexError> {
        match node {
            Node::Empty => {}
            Node::Char(_) | Node::Set(_) => {
                if let Some(one) = self.one(node)? {
                    self.push(Inst::One(one, dir))?;
                }
            }
            Node::Start => {
                self.push(Inst::Start)?;
            }
            Node::End => {
                self.push(Inst::End)?;
            }
            Node::WordBoundary { negated } => {
                self.push(Inst::WordBoundary { negated: *negated })?;
            }
            Node::Group { capture, body } => match capture {
                None => self.node(body, dir)?,
                Some(k) => {
                    let (open, close) = (2 * *k as usize, 2 * *k as usize + 1);
                    let (first, last) = if dir == Dir::Forward {
                        (open, close)
                    } else {
                        (close, open)
                    };
                    self.push(Inst::Save(first))?;
                    self.node(body, dir)?;
                    self.push(Inst::Save(last))?;
                }
            },
            Node::Look {
                behind,
                negated,
                body,
            } => {
                let at = self.push(Inst::Fail)?;
                self.node(body, if *behind { Dir::Backward } else { Dir::Forward })?;
                self.push(Inst::LookEnd)?;
                let next = self.insts.len();
                self.insts[at] = Inst::Look {
                    behind: *behind,
                    negated: *negated,
                    body: at + 1,
                    next,
                };
            }
            Node::Backref(k) => {
                self.push(Inst::Backref {
                    group: *k as usize,
                    dir,
                })?;
            }
            Node::Repeat {
                body,
                min,
                max,
                greedy,
            } => {
                let min = *min as usize;
                let max = max.map_or(usize::MAX, |m| m as usize);
                if max == 0 {
                    return Ok(());
                }
                if let Some(one) = self.one(body)? {
                    self.push(Inst::Repeat1 {
                        one,
                        dir,
                        min,
                        max,
                        greedy: *greedy,
                    })?;
                    return Ok(());
                }
                let reg = self.registers;
                self.registers += 2;
                let clear = capture_slots(body).unwrap_or((0, 0));
                self.push(Inst::RepInit { reg })?;
                let head = self.push(Inst::Fail)?;
                self.push(Inst::RepEnter { reg, clear })?;
                self.node(body, dir)?;
                self.push(Inst::RepEnd { reg, min, head })?;
                let exit = self.insts.len();
                self.insts[head] = Inst::RepLoop {
                    reg,
                    min,
                    max,
                    greedy: *greedy,
                    exit,
                };
            }
            Node::Concat(nodes) => {
                if dir == Dir::Forward {
                    for n in nodes {
                        self.node(n, dir)?;
                    }
                } else {
                    for n in nodes.iter().rev() {
                        self.node(n, dir)?;
                    }
                }
            }
            Node::Alt(nodes) => {
                let mut jumps = Vec::new();
                for (i, n) in nodes.iter().enumerate() {
                    let split = if i + 1 < nodes.len() {
                        Some(self.push(Inst::Fail)?)
                    } else {
                        None
                    };
                    self.node(n, dir)?;
                    if let Some(split) = split {
                        jumps.push(self.push(Inst::Fail)?);
                        let alt = self.insts.len();
                        self.insts[split] = Inst::Split { alt };
                    }
                }
                let end = self.insts.len();
                for j in jumps {
                    self.insts[j] = Inst::Jmp(end);
                }
            }
        }
        Ok(())
    }
}

impl Program {
    pub(super) fn compile(root: &Node, groups: u32, budget: usize) -> Result<Program, RegexError> {
        let mut c = Compiler {
            insts: Vec::new(),
            sets: Vec::new(),
            registers: 2 * (groups as usize + 1),
        };
        c.node(root, Dir::Forward)?;
        c.push(Inst::Match)?;
        let head = match root {
            Node::Concat(nodes) => nodes.first(),
            other => Some(other),
        };
        let anchored = matches!(head, Some(Node::Start));
        let first = match c.insts.first() {
            Some(Inst::One(one, Dir::Forward)) => Some(*one),
            Some(Inst::Repeat1 {
                one,
                dir: Dir::Forward,
                min,
                ..
            }) if *min > 0 => Some(*one),
            _ => None,
        };
        Ok(Program {
            insts: c.insts.into(),
            sets: c.sets.into(),
            registers: c.registers,
            anchored,
            first,
            budget,
        })
    }

    /// The per-search step limit this program was compiled with.
    pub(super) fn budget(&self) -> usize {
        self.budget
    }

    /// Searches `haystack` taking at most `limit` steps; also returns the steps taken.
    pub(super) fn is_match(
        &self,
        haystack: &str,
        limit: usize,
    ) -> (Result<bool, BudgetExceeded>, usize) {
        let mut run = Run {
            program: self,
            hay: haystack,
            regs: vec![UNSET; self.registers],
            stack: Vec::new(),
            undo: Vec::new(),
            steps: 0,
            limit,
        };
        let result = run.search();
        (result, run.steps.min(limit))
    }
}

impl Run<'_, '_> {
    /// Tries every start offset (only 0 when anchored) until one matches.
    fn search(&mut self) -> Result<bool, BudgetExceeded> {
        let program = self.program;
        let haystack = self.hay;
        let mut start = 0;
        loop {
            let candidate = match program.first {
                Some(one) => haystack
                    .get(start..)
                    .and_then(|rest| rest.char_indices().find(|&(_, c)| self.test(one, c)))
                    .map(|(i, _)| start + i),
                None => Some(start),
            };
            let Some(at) = candidate else {
                return Ok(false);
            };
            self.tick()?;
            if self.exec(0, at)?.is_some() {
                return Ok(true);
            }
            self.rollback(0);
            if program.anchored {
                return Ok(false);
            }
            match haystack.get(at..).and_then(|rest| rest.chars().next()) {
                Some(c) => start = at + c.len_utf8(),
                None => return Ok(false),
            }
        }
    }
}

/// A point to resume from when the current path fails.
enum Frame {
    /// Resume at `pc` from `pos`.
    Branch { pc: usize, pos: usize, undo: usize },
    /// A greedy `Repeat1` at `pc` that took `count` characters, ending at `pos`: give one back.
    GiveBack {
        pc: usize,
        pos: usize,
        count: usize,
        undo: usize,
    },
    /// A lazy `Repeat1` at `pc` that took `count` characters, ending at `pos`: take one more.
    TakeMore {
        pc: usize,
        pos: usize,
        count: usize,
        undo: usize,
    },
}

struct Run<'p, 'h> {
    program: &'p Program,
    hay: &'h str,
    regs: Vec<usize>,
    stack: Vec<Frame>,
    /// (register, previous value), to restore on backtracking.
    undo: Vec<(usize, usize)>,
    steps: usize,
    limit: usize,
}

fn is_word(c: Option<char>) -> bool {
    c.is_some_and(|c| {
        let c = u32::from(c);
        WORD.iter().any(|&(lo, hi)| (lo..=hi).contains(&c))
    })
}

impl Run<'_, '_> {
    fn tick(&mut self) -> Result<(), BudgetExceeded> {
        self.steps += 1;
        if self.steps > self.limit {
            Err(BudgetExceeded)
        } else {
            Ok(())
        }
    }

    fn test(&self, one: One, c: char) -> bool {
        match one {
            One::Char(x) => x == c,
            One::Set(i) => {
                let c = u32::from(c);
                self.program.sets.get(i).is_some_and(|ranges| {
                    let at = ranges.partition_point(|&(_, hi)| hi < c);
                    ranges.get(at).is_some_and(|&(lo, _)| lo <= c)
                })
            }
        }
    }

    /// The character next to `pos` in direction `dir`, and the position past it.
    fn next_char(&self, pos: usize, dir: Dir) -> Option<(char, usize)> {
        match dir {
            Dir::Forward => {
                let c = self.hay.get(pos..)?.chars().next()?;
                Some((c, pos + c.len_utf8()))
            }
            Dir::Backward => {
                let c = self.hay.get(..pos)?.chars().next_back()?;
                Some((c, pos - c.len_utf8()))
            }
        }
    }

    fn step_one(&self, one: One, pos: usize, dir: Dir) -> Option<usize> {
        let (c, next) = self.next_char(pos, dir)?;
        self.test(one, c).then_some(next)
    }

    fn set_reg(&mut self, reg: usize, value: usize) -> Result<(), BudgetExceeded> {
        if self.undo.len() >= MAX_STACK {
            return Err(BudgetExceeded);
        }
        let Some(slot) = self.regs.get_mut(reg) else {
            return Ok(());
        };
        self.undo.push((reg, *slot));
        *slot = value;
        Ok(())
    }

    fn reg(&self, reg: usize) -> usize {
        self.regs.get(reg).copied().unwrap_or(UNSET)
    }

    fn rollback(&mut self, to: usize) {
        while self.undo.len() > to {
            if let Some((reg, old)) = self.undo.pop() {
                if let Some(slot) = self.regs.get_mut(reg) {
                    *slot = old;
                }
            }
        }
    }

    fn push(&mut self, frame: Frame) -> Result<(), BudgetExceeded> {
        if self.stack.len() >= MAX_STACK {
            return Err(BudgetExceeded);
        }
        self.stack.push(frame);
        Ok(())
    }

    /// Pops frames above `base` until one yields a place to resume; `None` when exhausted.
    fn backtrack(&mut self, base: usize) -> Result<Option<(usize, usize)>, BudgetExceeded> {
        while self.stack.len() > base {
            self.tick()?;
            let Some(frame) = self.stack.pop() else { break };
            match frame {
                Frame::Branch { pc, pos, undo } => {
                    self.rollback(undo);
                    return Ok(Some((pc, pos)));
                }
                Frame::GiveBack {
                    pc,
                    pos,
                    count,
                    undo,
                } => {
                    self.rollback(undo);
                    let Some(Inst::Repeat1 { dir, min, .. }) = self.program.insts.get(pc) else {
                        continue;
                    };
                    if count <= *min {
                        continue;
                    }
                    let back = match dir {
                        Dir::Forward => Dir::Backward,
                        Dir::Backward => Dir::Forward,
                    };
                    let Some((_, pos)) = self.next_char(pos, back) else {
                        continue;
                    };
                    if count - 1 > *min {
                        self.push(Frame::GiveBack {
                            pc,
                            pos,
                            count: count - 1,
                            undo,
                        })?;
                    }
                    return Ok(Some((pc + 1, pos)));
                }
                Frame::TakeMore {
                    pc,
                    pos,
                    count,
                    undo,
                } => {
                    self.rollback(undo);
                    let Some(Inst::Repeat1 { one, dir, max, .. }) = self.program.insts.get(pc)
                    else {
                        continue;
                    };
                    if count >= *max {
                        continue;
                    }
                    let Some(pos) = self.step_one(*one, pos, *dir) else {
                        continue;
                    };
                    self.push(Frame::TakeMore {
                        pc,
                        pos,
                        count: count + 1,
                        undo,
                    })?;
                    return Ok(Some((pc + 1, pos)));
                }
            }
        }
        Ok(None)
    }

    /// Runs the `Repeat1` at `pc` from `pos`: the position after the characters it takes
    /// first, with a frame to take fewer (greedy) or more (lazy) later; `None` if even the
    /// minimum does not match.
    fn repeat1(
        &mut self,
        pc: usize,
        mut pos: usize,
        one: One,
        dir: Dir,
        (min, max): (usize, usize),
        greedy: bool,
    ) -> Result<Option<usize>, BudgetExceeded> {
        let mut count = 0;
        while count < min {
            self.tick()?;
            let Some(next) = self.step_one(one, pos, dir) else {
                return Ok(None);
            };
            pos = next;
            count += 1;
        }
        let undo = self.undo.len();
        if greedy {
            while count < max {
                self.tick()?;
                let Some(next) = self.step_one(one, pos, dir) else {
                    break;
                };
                pos = next;
                count += 1;
            }
            if count > min {
                self.push(Frame::GiveBack {
                    pc,
                    pos,
                    count,
                    undo,
                })?;
            }
        } else if count < max {
            self.push(Frame::TakeMore {
                pc,
                pos,
                count,
                undo,
            })?;
        }
        Ok(Some(pos))
    }

    /// Runs from `pc` at `pos` until `Match`/`LookEnd` (the end position) or exhaustion.
    /// Frames pushed meanwhile are dropped on return: a finished run is atomic.
    // One arm per instruction: the dispatch loop reads best in one piece.
    #[allow(clippy::too_many_lines)]
    fn exec(&mut self, pc: usize, pos: usize) -> Result<Option<usize>, BudgetExceeded> {
        let base = self.stack.len();
        let (mut pc, mut pos) = (pc, pos);
        loop {
            self.tick()?;
            let ok = match self.program.insts.get(pc) {
                None | Some(Inst::Fail) => false,
                Some(Inst::Match | Inst::LookEnd) => {
                    self.stack.truncate(base);
                    return Ok(Some(pos));
                }
                Some(&Inst::One(one, dir)) => match self.step_one(one, pos, dir) {
                    Some(next) => {
                        pos = next;
                        pc += 1;
                        true
                    }
                    None => false,
                },
                Some(Inst::Start) => {
                    pc += 1;
                    pos == 0
                }
                Some(Inst::End) => {
                    pc += 1;
                    pos == self.hay.len()
                }
                Some(&Inst::WordBoundary { negated }) => {
                    let before = is_word(self.next_char(pos, Dir::Backward).map(|(c, _)| c));
                    let after = is_word(self.next_char(pos, Dir::Forward).map(|(c, _)| c));
                    pc += 1;
                    (before != after) != negated
                }
                Some(&Inst::Split { alt }) => {
                    let undo = self.undo.len();
                    self.push(Frame::Branch { pc: alt, pos, undo })?;
                    pc += 1;
                    true
                }
                Some(&Inst::Jmp(to)) => {
                    pc = to;
                    true
                }
                Some(&Inst::Save(slot)) => {
                    self.set_reg(slot, pos)?;
                    pc += 1;
                    true
                }
                Some(&Inst::Backref { group, dir }) => {
                    let (s, e) = (self.reg(2 * group), self.reg(2 * group + 1));
                    pc += 1;
                    if s == UNSET || e == UNSET || s > e {
                        true
                    } else {
                        let captured = self.hay.as_bytes().get(s..e).unwrap_or_default();
                        let len = captured.len();
                        let (from, to) = match dir {
                            Dir::Forward => (pos, pos.saturating_add(len)),
                            Dir::Backward => (pos.saturating_sub(len), pos),
                        };
                        let matched = (dir == Dir::Forward || pos >= len)
                            && self.hay.as_bytes().get(from..to) == Some(captured);
                        self.steps = self.steps.saturating_add(len / 16);
                        if matched {
                            pos = if dir == Dir::Forward { to } else { from };
                        }
                        matched
                    }
                }
                Some(&Inst::Look {
                    negated,
                    body,
                    next,
                    ..
                }) => {
                    let undo = self.undo.len();
                    let found = self.exec(body, pos)?.is_some();
                    if !found || negated {
                        // Captures set inside a failed or negative look-around are dropped.
                        self.rollback(undo);
                    }
                    pc = next;
                    found != negated
                }
                Some(&Inst::Repeat1 {
                    one,
                    dir,
                    min,
                    max,
                    greedy,
                }) => match self.repeat1(pc, pos, one, dir, (min, max), greedy)? {
                    Some(next) => {
                        pos = next;
                        pc += 1;
                        true
                    }
                    None => false,
                },
                Some(&Inst::RepInit { reg }) => {
                    self.set_reg(reg, 0)?;
                    pc += 1;
                    true
                }
                Some(&Inst::RepLoop {
                    reg,
                    min,
                    max,
                    greedy,
                    exit,
                }) => {
                    let count = self.reg(reg);
                    if count < min {
                        pc += 1;
                    } else if count >= max {
                        pc = exit;
                    } else {
                        let undo = self.undo.len();
                        let (now, later) = if greedy {
                            (pc + 1, exit)
                        } else {
                            (exit, pc + 1)
                        };
                        self.push(Frame::Branch {
                            pc: later,
                            pos,
                            undo,
                        })?;
                        pc = now;
                    }
                    true
                }
                Some(&Inst::RepEnter { reg, clear }) => {
                    self.set_reg(reg + 1, pos)?;
                    for slot in clear.0..clear.1 {
                        if self.reg(slot) != UNSET {
                            self.set_reg(slot, UNSET)?;
                        }
                    }
                    pc += 1;
                    true
                }
                Some(&Inst::RepEnd { reg, min, head }) => {
                    let count = self.reg(reg);
                    if count >= min && self.reg(reg + 1) == pos {
                        false
                    } else {
                        self.set_reg(reg, count.saturating_add(1))?;
                        pc = head;
                        true
                    }
                }
            };
            if !ok {
                match self.backtrack(base)? {
                    Some((resume_pc, resume_pos)) => {
                        pc = resume_pc;
                        pos = resume_pos;
                    }
                    None => return Ok(None),
                }
            }
        }
    }
}
