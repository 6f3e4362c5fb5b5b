//! [`Tee`]: one stream of scanner events sent to two sinks (a validator and a selector, a
//! validator and a value builder) so that both run on the same pass. It holds no state of
//! its own and never reorders or drops an event.

use crate::scan::{Event, Flow, Position, Sink};

/// Sends every event to two sinks; stops as soon as either asks to stop (both see the event
/// that caused it).
///
/// # Example
/// ```
/// use jsongate::{scan, Limits, Schema, Validator};
/// use jsongate::json::Tee;
/// use jsongate::select::{Projection, Selector};
/// let schema = Schema::compile(br#"{"required":["id"]}"#).unwrap();
/// let p = Projection::new([("id", "/id")]).unwrap();
/// let mut tee = Tee(Validator::new(&schema), Selector::new(&p));
/// scan(br#"{"id":"r-1","noise":[1,2,3]}"#, Limits::new(), &mut tee).unwrap();
/// assert!(tee.0.is_valid());
/// assert_eq!(tee.1.to_object().to_json(), r#"{"id":"r-1"}"#);
/// ```
#[derive(Debug)]
pub struct Tee<A, B>(pub A, pub B);

impl<A: Sink, B: Sink> Sink for Tee<A, B> {
    #[inline]
    fn event(&mut self, event: Event<'_>, offset: u64) -> Flow {
        either_stops(self.0.event(event, offset), self.1.event(event, offset))
    }

    #[inline]
    fn event_at(&mut self, event: Event<'_>, at: Position) -> Flow {
        either_stops(self.0.event_at(event, at), self.1.event_at(event, at))
    }
}

/// [`Flow::Stop`] if either side asked to stop.
#[inline]
fn either_stops(a: Flow, b: Flow) -> Flow {
    if a == Flow::Stop || b == Flow::Stop {
        Flow::Stop
    } else {
        Flow::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::ValueBuilder;
    use crate::{Limits, Scanner};

    /// Counts events and asks to stop after `stop_after` of them.
    struct Stopper {
        seen: usize,
        stop_after: usize,
    }

    impl Sink for Stopper {
        fn event(&mut self, _: Event<'_>, _: u64) -> Flow {
            self.seen += 1;
            if self.seen >= self.stop_after {
                Flow::Stop
            } else {
                Flow::Continue
            }
        }
    }

    #[test]
    fn both_sides_see_every_event_until_one_stops() {
        let mut tee = Tee(
            Stopper {
                seen: 0,
                stop_after: 3,
            },
            ValueBuilder::new(),
        );
        let out = Scanner::new(Limits::new())
            .scan_slice(b"[1,2,3,4]", &mut tee)
            .unwrap();
        assert_eq!(out, crate::Outcome::Stopped);
        // `[`, `1`, `2`: both saw the third event, neither saw a fourth.
        assert_eq!(tee.0.seen, 3);
        assert!(!tee.1.is_done());
        let mut tee = Tee(
            ValueBuilder::new(),
            Stopper {
                seen: 0,
                stop_after: 100,
            },
        );
        Scanner::new(Limits::new())
            .scan_slice(b"[1,2]", &mut tee)
            .unwrap();
        assert_eq!(tee.0.take().unwrap().to_json(), "[1,2]");
        assert_eq!(tee.1.seen, 4);
    }
}
