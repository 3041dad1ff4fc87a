//! `iosched.schedulers()`, `devices()`, `knobs()`: what the CLI's listings show, as JSON
//! text the Python side turns into lists of dicts.

use pyo3::prelude::*;
use serde_json::{json, Value};

/// Every scheduler with its tunables; the kernel's own (run by `iosched kernel`) last, marked.
#[pyfunction]
pub fn schedulers() -> String {
    let mut list: Vec<Value> = iosched_core::schedulers()
        .iter()
        .map(|scheduler| {
            let tunables: Vec<Value> = scheduler
                .tunables
                .iter()
                .map(|t| {
                    json!({
                        "name": t.name, "default": t.default, "unit": t.unit, "min": t.min,
                        "max": t.max, "meaning": t.meaning, "extension": t.extension,
                    })
                })
                .collect();
            json!({
                "name": scheduler.name, "aliases": scheduler.aliases,
                "summary": scheduler.summary, "tunables": tunables, "kernel_only": false,
            })
        })
        .collect();
    list.extend(iosched_lab::listing::KERNEL_ONLY.iter().map(|name| {
        json!({
            "name": name, "aliases": [], "tunables": [], "kernel_only": true,
            "summary": "the kernel's own, run by fio on a real block device with `iosched kernel`",
        })
    }));
    Value::from(list).to_string()
}

/// The simulated device presets.
#[pyfunction]
pub fn devices() -> String {
    let list: Vec<Value> = iosched_lab::listing::devices()
        .iter()
        .map(|d| {
            json!({
                "name": d.name, "rotational": d.rotational, "queue_depth": d.queue_depth,
                "capacity_bytes": d.capacity_bytes, "summary": d.summary,
            })
        })
        .collect();
    Value::from(list).to_string()
}

/// The machine's and the engine's knobs with their defaults as `--set` writes them.
#[pyfunction]
pub fn knobs() -> String {
    let list: Vec<Value> = iosched_lab::listing::knobs()
        .iter()
        .map(|k| json!({"name": k.name, "default": k.default, "meaning": k.meaning}))
        .collect();
    Value::from(list).to_string()
}
