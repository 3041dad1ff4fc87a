//! The option table as documentation: what the reference pages list, read from the same table
//! the parser uses so that the two cannot drift apart.

use super::options::{Kind, FOREIGN_ENGINE_OPTIONS, OPTIONS};
use super::value::TimeUnit;

/// One option the parser knows.
pub struct OptionDoc {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    /// How its value is written ("integer", "one of: read, write", ...).
    pub value: String,
    /// False for options that are checked by kind and then ignored (logging, affinity...).
    pub driven: bool,
}

/// Every option in table order.
pub fn option_catalog() -> Vec<OptionDoc> {
    OPTIONS
        .iter()
        .map(|def| OptionDoc {
            name: def.name,
            aliases: def.aliases,
            value: describe(def.kind),
            driven: def.apply.is_some(),
        })
        .collect()
}

/// Options of fio's engines that iosched does not drive, by engine: a job file naming one is
/// refused with the engine named.
pub fn foreign_engine_options() -> &'static [(&'static str, &'static [&'static str])] {
    FOREIGN_ENGINE_OPTIONS
}

fn describe(kind: Kind) -> String {
    match kind {
        Kind::Set => "flag (bare, or =N with N != 0 for on)".to_string(),
        Kind::Bool => "0 or 1".to_string(),
        Kind::Int => "integer (with fio's unit suffixes)".to_string(),
        Kind::Time(TimeUnit::Seconds) => "time (bare numbers in seconds)".to_string(),
        Kind::Time(TimeUnit::Micros) => "time (bare numbers in microseconds)".to_string(),
        Kind::Enum(values) => format!("one of: {}", values.join(", ")),
        Kind::Text => "text".to_string(),
        Kind::MaybeText => "text, or nothing".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignored_options_are_told_apart_from_driven_ones() {
        let catalog = option_catalog();
        let rw = catalog
            .iter()
            .find(|o| o.name == "rw")
            .expect("rw is listed");
        assert!(rw.driven);
        assert!(rw.value.starts_with("one of: "), "{}", rw.value);
        assert!(
            catalog.iter().any(|o| !o.driven),
            "logging options are ignored"
        );
    }
}
