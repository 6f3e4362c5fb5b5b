//! The criterion entry point every bench shares: one target, sized for a shared 2-core
//! machine (1 s warm-up; the sample count and measurement time per bench).

/// Declares `main` running `$target` with `$samples` samples measured for `$secs` seconds.
/// (`criterion_group!` makes an undocumented `pub fn`, hence the private module.)
macro_rules! bench_main {
    ($target:ident, $samples:expr, $secs:expr) => {
        #[allow(missing_docs)]
        mod group {
            use super::$target;
            criterion::criterion_group! {
                name = benches;
                config = criterion::Criterion::default()
                    .sample_size($samples)
                    .warm_up_time(std::time::Duration::from_secs(1))
                    .measurement_time(std::time::Duration::from_secs($secs));
                targets = $target
            }
        }
        criterion::criterion_main!(group::benches);
    };
}
