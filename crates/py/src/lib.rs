//! `iosched._iosched`: the native half of the Python package `iosched` (see
//! `python/iosched/`). Every function here calls the crate functions the CLI calls —
//! [`iosched_lab::run::spec_from`], [`iosched_lab::run::execute`], [`iosched_lab::sweep`] —
//! and hands back text (JSON, CSV, wire rows) the Python side decodes, so a result from
//! Python is the CLI's result. Runs release the GIL; a panic becomes `InternalError`.
//!
//! No other crate depends on this one or on PyO3.

mod error;
mod listing;
mod run;
mod sweep;

/// The native module; `iosched` (Python) wraps it.
#[pyo3::pymodule]
mod _iosched {
    #[pymodule_export]
    use crate::listing::{devices, knobs, schedulers};
    #[pymodule_export]
    use crate::run::{run_spec, spec_from};
    #[pymodule_export]
    use crate::sweep::{
        sweep_measure, sweep_pilot, sweep_point_count, sweep_specs, sweep_table, sweep_write_out,
    };

    #[pymodule_init]
    fn init(module: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
        use pyo3::types::PyModuleMethods;
        module.add("__version__", env!("CARGO_PKG_VERSION"))
    }
}
