//! Holds nothing: the peer comparisons are the benches of this project.
