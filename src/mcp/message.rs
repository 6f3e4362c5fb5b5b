//! What the proxy needs to know about one JSON-RPC line, read from the scanner's events in
//! the same pass that checks the line: the top-level `id`, `method`, whether it is a result
//! or an error, and the handful of MCP members the proxy acts on (`structuredContent`,
//! `isError`, tool schemas in a `tools/list` page, `arguments` of a `tools/call`, task ids).
//!
//! Nothing is materialised: containers the proxy needs later (schemas, arguments,
//! `structuredContent` when its tool was not known yet) are recorded as byte spans of the
//! line. When the id of a result is already known as it streams, its `structuredContent` is
//! routed straight into the tool's output validator, so a violation stops the scan at the
//! deciding byte.

use crate::json::write_string;
use crate::scan::{Event, Flow, Position, Sink};
use crate::{Rejection, Validator, Violation};

/// A JSON-RPC id as the proxy keys it: strings by their decoded text, numbers by their exact
/// text. (JSON-RPC ids are strings or integers; the text of an integer is canonical.)
///
/// # Example
/// ```
/// use jsongate::mcp::Id;
/// assert_eq!(Id::Num("7".into()).to_json(), "7");
/// assert_eq!(Id::Str("a\"b".into()).to_json(), r#""a\"b""#);
/// assert_eq!(Id::Null.to_json(), "null");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Id {
    /// A string id.
    Str(String),
    /// A number id, as its exact text.
    Num(String),
    /// `null`.
    Null,
}

impl Id {
    /// The id as JSON text, for responses the proxy writes itself.
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::Id;
    /// assert_eq!(Id::Str("req-1".into()).to_json(), r#""req-1""#);
    /// ```
    pub fn to_json(&self) -> String {
        match self {
            Id::Num(t) => t.clone(),
            Id::Null => "null".to_owned(),
            Id::Str(s) => {
                let mut out = String::with_capacity(s.len() + 2);
                write_string(&mut out, s);
                out
            }
        }
    }
}

/// A byte range of the line.
pub type Span = (usize, usize);

/// One tool of a `tools/list` page.
#[derive(Clone, Debug, Default)]
pub struct ToolSpans {
    /// `name`, when it was a string.
    pub name: Option<String>,
    /// `inputSchema`, when it was an object.
    pub input: Option<Span>,
    /// `outputSchema`, when it was an object.
    pub output: Option<Span>,
    /// A schema member that was present but not an object.
    pub bad_schema: bool,
    /// The whole tool object, when the item was an object.
    pub span: Option<Span>,
}

/// The members of a line the proxy acts on. Every `bad_*` flag marks a member present with
/// the wrong JSON type, which MCP does not allow.
#[derive(Debug, Default)]
pub struct Message {
    /// The top-level value was not an object.
    pub not_object: bool,
    /// The top-level `id`, when it was a string, number or null.
    pub id: Option<Id>,
    /// `id` present but an object, array or boolean.
    pub bad_id: bool,
    /// The top-level `method`, when it was a string.
    pub method: Option<String>,
    /// `method` present but not a string.
    pub bad_method: bool,
    /// A `result` member was present (of any type; `bad_result` when not an object).
    pub has_result: bool,
    /// `result` was not an object.
    pub bad_result: bool,
    /// An `error` member was present.
    pub has_error: bool,
    /// `result.structuredContent` (an object).
    pub structured: Option<Span>,
    /// `result.structuredContent` present but not an object.
    pub bad_structured: bool,
    /// `result.isError`, when a boolean.
    pub is_error: Option<bool>,
    /// `result.isError` present but not a boolean.
    pub bad_is_error: bool,
    /// `result.content` present but not an array.
    pub bad_content: bool,
    /// `result.resultType`, when a string.
    pub result_type: Option<String>,
    /// `result.task` was an object (a task-augmented call's `CreateTaskResult`).
    pub has_task: bool,
    /// `result.task.taskId`.
    pub task_id: Option<String>,
    /// `result.tools` was an array.
    pub has_tools: bool,
    /// The tools of a `tools/list` page.
    pub tools: Vec<ToolSpans>,
    /// `result.nextCursor`.
    pub next_cursor: Option<String>,
    /// `params.name` (the tool of a `tools/call`).
    pub tool: Option<String>,
    /// `params.arguments` (an object).
    pub arguments: Option<Span>,
    /// `params.arguments` present but not an object.
    pub bad_arguments: bool,
    /// `params.task` present (the call asks to run as a task).
    pub wants_task: bool,
    /// `params.taskId` (of `tasks/result`).
    pub param_task_id: Option<String>,
    /// `params._meta` (an object).
    pub meta: Option<Span>,
    /// `result.serverInfo.name` (of an `initialize` answer).
    pub server_name: Option<String>,
}

impl Message {
    /// A response: an id and no method.
    #[cfg(test)]
    pub fn is_response(&self) -> bool {
        self.method.is_none() && (self.has_result || self.has_error)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    Other,
    Item,
    Id,
    Method,
    Result,
    Error,
    Params,
    Structured,
    IsError,
    Content,
    ResultType,
    Task,
    TaskId,
    Tools,
    NextCursor,
    Name,
    InputSchema,
    OutputSchema,
    Arguments,
    Meta,
    ServerInfo,
}

fn classify(name: &str) -> Key {
    match name {
        "id" => Key::Id,
        "method" => Key::Method,
        "result" => Key::Result,
        "error" => Key::Error,
        "params" => Key::Params,
        "structuredContent" => Key::Structured,
        "isError" => Key::IsError,
        "content" => Key::Content,
        "resultType" => Key::ResultType,
        "task" => Key::Task,
        "taskId" => Key::TaskId,
        "tools" => Key::Tools,
        "nextCursor" => Key::NextCursor,
        "name" => Key::Name,
        "inputSchema" => Key::InputSchema,
        "outputSchema" => Key::OutputSchema,
        "arguments" => Key::Arguments,
        "_meta" => Key::Meta,
        "serverInfo" => Key::ServerInfo,
        _ => Key::Other,
    }
}

/// Deepest level whose member names are classified; deeper values are only counted.
const TRACKED: usize = 4;

/// What a recorded span is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SpanOf {
    Structured,
    Input,
    Output,
    Arguments,
    Meta,
}

/// Looks up, when a response's id is read, the validator for its `structuredContent`.
pub trait Route {
    /// The output validator for the response with this id, if its structured content must
    /// be validated (a pending `tools/call` or `tasks/result` of a tool with an
    /// `outputSchema`).
    fn output_validator(&mut self, id: &Id) -> Option<Validator>;
}

/// No routing (client lines, tests).
pub struct NoRoute;

impl Route for NoRoute {
    fn output_validator(&mut self, _: &Id) -> Option<Validator> {
        None
    }
}

/// The verdict of inline validation of `structuredContent`.
#[derive(Debug)]
pub enum Inline {
    /// Not validated while scanning (no validator was known when it began).
    NotRun,
    /// Validated and satisfied the schema.
    Valid,
    /// Violated the schema; the scan stopped there.
    Violation(Box<Violation>),
    /// The evaluation budget ran out.
    BudgetExceeded,
}

/// The scanner sink that fills a [`Message`].
pub struct MessageSink<'r, R: Route> {
    /// What was read so far.
    pub msg: Message,
    /// The inline verdict on `structuredContent`.
    pub inline: Inline,
    route: &'r mut R,
    depth: usize,
    path: [Key; TRACKED + 1],
    in_array: [bool; TRACKED + 1],
    /// The span being recorded: its kind, the depth of its container and its start.
    open: Option<(SpanOf, usize, usize)>,
    /// The tool object being recorded (its schemas may be recorded inside it): the depth of
    /// its container and its start.
    tool_open: Option<(usize, usize)>,
    validator: Option<Validator>,
    /// Depth at which events are routed to the validator (the structured content's own).
    routing: Option<usize>,
}

impl<'r, R: Route> MessageSink<'r, R> {
    /// A sink for one line.
    pub fn new(route: &'r mut R) -> Self {
        MessageSink {
            msg: Message::default(),
            inline: Inline::NotRun,
            route,
            depth: 0,
            path: [Key::Other; TRACKED + 1],
            in_array: [false; TRACKED + 1],
            open: None,
            tool_open: None,
            validator: None,
            routing: None,
        }
    }

    /// Handles a value (scalar or container start) at the current path.
    fn value(&mut self, ev: &Event<'_>, offset: usize) {
        use Key::{
            Arguments, Content, Error, Id as KId, InputSchema, IsError, Item, Meta, Method, Name,
            NextCursor, OutputSchema, Params, Result, ResultType, ServerInfo, Structured, Task,
            TaskId, Tools,
        };
        let d = self.depth;
        if d == 0 {
            self.msg.not_object = !matches!(ev, Event::BeginObject);
            return;
        }
        if d > TRACKED {
            return;
        }
        let is_obj = matches!(ev, Event::BeginObject);
        let text = match ev {
            Event::String(s) => Some(*s),
            _ => None,
        };
        let m = &mut self.msg;
        match &self.path[1..=d] {
            [KId] => match ev {
                Event::String(s) => m.id = Some(Id::Str((*s).to_owned())),
                Event::Number(n) => m.id = Some(Id::Num(n.as_str().to_owned())),
                Event::Null => m.id = Some(Id::Null),
                _ => m.bad_id = true,
            },
            [Method] => match text {
                Some(s) => m.method = Some(s.to_owned()),
                None => m.bad_method = true,
            },
            [Result] => {
                m.has_result = true;
                m.bad_result = !is_obj;
            }
            [Error] => m.has_error = true,
            [Result, Structured] => {
                if is_obj {
                    self.open = Some((SpanOf::Structured, d + 1, offset));
                    if let Some(id) = &self.msg.id {
                        self.validator = self.route.output_validator(id);
                        if self.validator.is_some() {
                            self.routing = Some(d + 1);
                        }
                    }
                } else {
                    m.bad_structured = true;
                }
            }
            [Result, IsError] => match ev {
                Event::Bool(b) => m.is_error = Some(*b),
                _ => m.bad_is_error = true,
            },
            [Result, Content] => m.bad_content = !matches!(ev, Event::BeginArray),
            [Result, ResultType] => m.result_type = text.map(str::to_owned),
            [Result, Task] => m.has_task = is_obj,
            [Result, Task, TaskId] => m.task_id = text.map(str::to_owned),
            [Result, NextCursor] => m.next_cursor = text.map(str::to_owned),
            [Result, Tools] => m.has_tools = matches!(ev, Event::BeginArray),
            [Result, Tools, Item] if m.has_tools => {
                m.tools.push(ToolSpans::default());
                if is_obj {
                    self.tool_open = Some((d + 1, offset));
                }
            }
            [Result, ServerInfo, Name] => m.server_name = text.map(str::to_owned),
            [Result, Tools, Item, Name] => {
                if let (Some(t), Some(s)) = (m.tools.last_mut(), text) {
                    t.name = Some(s.to_owned());
                }
            }
            [Result, Tools, Item, k @ (InputSchema | OutputSchema)] => {
                if let Some(t) = m.tools.last_mut() {
                    if is_obj {
                        let of = if *k == InputSchema {
                            SpanOf::Input
                        } else {
                            SpanOf::Output
                        };
                        self.open = Some((of, d + 1, offset));
                    } else if !matches!(ev, Event::Null) {
                        t.bad_schema = true;
                    }
                }
            }
            [Params, Name] => m.tool = text.map(str::to_owned),
            [Params, Arguments] => {
                if is_obj {
                    self.open = Some((SpanOf::Arguments, d + 1, offset));
                } else {
                    m.bad_arguments = true;
                }
            }
            [Params, Task] => m.wants_task = true,
            [Params, TaskId] => m.param_task_id = text.map(str::to_owned),
            [Params, Meta] if is_obj => self.open = Some((SpanOf::Meta, d + 1, offset)),
            _ => {}
        }
    }

    /// Closes the span that ends with the container closing at `offset`.
    fn close(&mut self, offset: usize) {
        if let Some((depth, start)) = self.tool_open {
            if depth == self.depth + 1 {
                self.tool_open = None;
                if let Some(t) = self.msg.tools.last_mut() {
                    t.span = Some((start, offset + 1));
                }
            }
        }
        let Some((of, depth, start)) = self.open else {
            return;
        };
        if depth != self.depth + 1 {
            return;
        }
        self.open = None;
        let span = (start, offset + 1);
        let m = &mut self.msg;
        match of {
            SpanOf::Structured => m.structured = Some(span),
            SpanOf::Arguments => m.arguments = Some(span),
            SpanOf::Meta => m.meta = Some(span),
            SpanOf::Input | SpanOf::Output => {
                if let Some(t) = m.tools.last_mut() {
                    if of == SpanOf::Input {
                        t.input = Some(span);
                    } else {
                        t.output = Some(span);
                    }
                }
            }
        }
    }

    fn route_event(&mut self, ev: &Event<'_>, at: Position) -> Flow {
        let Some(v) = self.validator.as_mut() else {
            return Flow::Continue;
        };
        let flow = v.event_at(*ev, at);
        if flow == Flow::Stop {
            self.inline = if v.budget_exceeded() {
                Inline::BudgetExceeded
            } else {
                match v.violation() {
                    Some(x) => Inline::Violation(Box::new(x.clone())),
                    None if v.is_valid() => Inline::Valid,
                    None => Inline::NotRun,
                }
            };
            self.routing = None;
            self.validator = None;
            // A violation decides the line; a finished validator (the value closed) does not.
            if matches!(self.inline, Inline::Violation(_) | Inline::BudgetExceeded) {
                return Flow::Stop;
            }
        }
        Flow::Continue
    }

    /// After the structured content closed: the validator's verdict.
    fn finish_route(&mut self) {
        if let Some(v) = self.validator.take() {
            self.inline = if v.budget_exceeded() {
                Inline::BudgetExceeded
            } else if let Some(x) = v.violation() {
                Inline::Violation(Box::new(x.clone()))
            } else if v.is_valid() {
                Inline::Valid
            } else {
                Inline::NotRun
            };
        }
        self.routing = None;
    }
}

impl<R: Route> Sink for MessageSink<'_, R> {
    fn event(&mut self, event: Event<'_>, offset: u64) -> Flow {
        self.event_at(event, Position::on_one_line(offset))
    }

    fn event_at(&mut self, ev: Event<'_>, at: Position) -> Flow {
        let offset = usize::try_from(at.offset).unwrap_or(usize::MAX);
        if self.routing.is_some() && self.route_event(&ev, at) == Flow::Stop {
            return Flow::Stop;
        }
        match ev {
            Event::Name(n) => {
                if (1..=TRACKED).contains(&self.depth) {
                    self.path[self.depth] = classify(n);
                }
                return Flow::Continue;
            }
            Event::EndObject | Event::EndArray => {
                self.depth -= 1;
                self.close(offset);
                if self.routing.is_some_and(|d| d == self.depth + 1) {
                    self.finish_route();
                }
                return Flow::Continue;
            }
            _ => {}
        }
        // A value: inside an array its key is the item.
        if (1..=TRACKED).contains(&self.depth) && self.in_array[self.depth] {
            self.path[self.depth] = Key::Item;
        }
        let was_routing = self.routing.is_some();
        self.value(&ev, offset);
        if self.msg.not_object {
            return Flow::Stop;
        }
        // The structured content's own `{` starts the routed events.
        if !was_routing && self.routing.is_some() && self.route_event(&ev, at) == Flow::Stop {
            return Flow::Stop;
        }
        match ev {
            Event::BeginObject | Event::BeginArray => {
                self.depth += 1;
                if self.depth <= TRACKED {
                    self.in_array[self.depth] = matches!(ev, Event::BeginArray);
                    self.path[self.depth] = Key::Other;
                }
            }
            _ => {}
        }
        Flow::Continue
    }
}

/// The reason a rejected line gives, for the audit record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Finding {
    /// Failure class (`schema`, a scanner error code, `missing_structured_content`, …).
    pub class: &'static str,
    /// Failing keyword, for schema violations.
    pub keyword: Option<String>,
    /// Keyword location through the schema.
    pub keyword_location: Option<String>,
    /// JSON Pointer of the instance in the line.
    pub pointer: Option<String>,
    /// Byte offset in the line.
    pub offset: Option<u64>,
    /// More members for the audit line, as JSON text (`"definition":{…}`), if any.
    pub extra: Option<Box<str>>,
}

impl Finding {
    /// A finding of class `class` at no particular place.
    pub fn of(class: &'static str) -> Finding {
        Finding {
            class,
            ..Finding::default()
        }
    }

    /// A schema violation found in a value that starts at byte `base` of the line, under
    /// the pointer `prefix`.
    pub fn violation(v: &Violation, base: u64, prefix: &str) -> Finding {
        Finding {
            class: "schema",
            keyword: Some(v.keyword().to_owned()),
            keyword_location: Some(v.keyword_location().to_owned()),
            pointer: Some(format!("{prefix}{}", v.instance_pointer())),
            offset: Some(base + v.offset()),
            extra: None,
        }
    }

    /// A scanner error or a schema violation of a whole line.
    pub fn rejection(r: &Rejection, base: u64, prefix: &str) -> Finding {
        match r {
            Rejection::Violation(v) => Finding::violation(v, base, prefix),
            Rejection::Error(e) => Finding {
                class: e.kind().code(),
                pointer: Some(format!("{prefix}{}", e.pointer())),
                offset: Some(base + e.offset()),
                ..Finding::default()
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Limits, Scanner};

    fn read(line: &str) -> Message {
        let mut route = NoRoute;
        let mut sink = MessageSink::new(&mut route);
        Scanner::new(Limits::new())
            .scan_slice(line.as_bytes(), &mut sink)
            .unwrap();
        sink.msg
    }

    fn span(line: &str, s: Option<Span>) -> &str {
        let (a, b) = s.unwrap();
        &line[a..b]
    }

    #[test]
    fn a_call_names_its_tool_arguments_meta_and_task() {
        let l = r#"{"params":{"_meta":{"a":[1]},"name":"t","arguments":{"x":{"y":[]}},"task":{}},"method":"tools/call","id":"q"}"#;
        let m = read(l);
        assert_eq!(m.id, Some(Id::Str("q".into())));
        assert_eq!(m.method.as_deref(), Some("tools/call"));
        assert_eq!(m.tool.as_deref(), Some("t"));
        assert_eq!(span(l, m.arguments), r#"{"x":{"y":[]}}"#);
        assert_eq!(span(l, m.meta), r#"{"a":[1]}"#);
        assert!(m.wants_task && m.id.is_some() && !m.is_response());
    }

    #[test]
    fn a_listing_gives_each_tools_schemas() {
        let l = r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"inputSchema":{},"outputSchema":{"x":{"name":"no"}},"name":"b"},{"name":"c","inputSchema":[]},5],"nextCursor":"n"}}"#;
        let m = read(l);
        assert_eq!(m.id, Some(Id::Num("7".into())));
        assert_eq!(m.tools.len(), 4);
        assert_eq!(m.tools[0].name.as_deref(), Some("a"));
        assert_eq!(span(l, m.tools[0].input), r#"{"type":"object"}"#);
        assert_eq!(m.tools[1].name.as_deref(), Some("b"));
        assert_eq!(span(l, m.tools[1].output), r#"{"x":{"name":"no"}}"#);
        assert_eq!(
            span(l, m.tools[0].span),
            r#"{"name":"a","inputSchema":{"type":"object"}}"#
        );
        assert!(m.tools[3].span.is_none());
        assert!(m.tools[2].bad_schema);
        assert!(m.tools[3].name.is_none());
        assert_eq!(m.next_cursor.as_deref(), Some("n"));
    }

    #[test]
    fn a_result_reports_its_members_and_their_types() {
        let l = r#"{"id":1,"result":{"content":[{"structuredContent":1}],"structuredContent":{"a":{"isError":1}},"isError":false,"resultType":"complete","task":{"taskId":"t"}}}"#;
        let m = read(l);
        assert!(m.is_response() && m.has_result && !m.bad_result);
        assert_eq!(span(l, m.structured), r#"{"a":{"isError":1}}"#);
        assert_eq!(m.is_error, Some(false));
        assert!(!m.bad_is_error && !m.bad_content && !m.bad_structured);
        assert_eq!(m.result_type.as_deref(), Some("complete"));
        assert_eq!(m.task_id.as_deref(), Some("t"));
        let m =
            read(r#"{"id":null,"result":{"content":{},"structuredContent":[],"isError":"no"}}"#);
        assert_eq!(m.id, Some(Id::Null));
        assert!(m.bad_content && m.bad_structured && m.bad_is_error);
        assert!(read(r#"{"id":[1]}"#).bad_id);
        assert!(read(r#"{"method":1}"#).bad_method);
        assert!(read(r#"{"error":{},"id":2}"#).is_response());
    }

    #[test]
    fn a_non_object_stops_at_once() {
        let mut route = NoRoute;
        let mut sink = MessageSink::new(&mut route);
        let out = Scanner::new(Limits::new()).scan_slice(b"[1,2,", &mut sink);
        assert_eq!(out.unwrap(), crate::Outcome::Stopped);
        assert!(sink.msg.not_object);
    }
}
