//! Expansion of an option line before it is split at `=`: `${VAR}` and reserved keywords.
//!
//! fio does this per option line (`option_dup_subs()`, `fio_keyword_replace()`):
//!
//! 1. every `${NAME}` is replaced by the environment variable NAME, or by nothing when it is
//!    unset (the lookup here is [`ParseContext::env`], so results do not depend on the
//!    caller's real environment unless it asks for that);
//! 2. every `$pagesize`, `$mb_memory` and `$ncpus` is replaced by the context's figure;
//! 3. if a keyword was replaced and the value (after `=`) contains `+ - * /` and no `'`,
//!    the value is computed as `bc` would (`size=8*$mb_memory`).

use super::expr::{self, ExprMode};
use super::ParseContext;

/// Expand `${VAR}` and the reserved keywords in one option line. An error is the reason a
/// keyword value could not be computed.
pub(crate) fn expand_line(line: &str, ctx: &ParseContext) -> Result<String, String> {
    let line = expand_env(line, ctx);
    let (line, replaced) = replace_keywords(&line, ctx);
    if !replaced {
        return Ok(line);
    }
    let Some(eq) = line.find('=') else {
        return Ok(line);
    };
    let value = &line[eq + 1..];
    if !value.contains(['+', '-', '*', '/']) || value.contains('\'') {
        return Ok(line);
    }
    let computed = expr::eval(value, ExprMode::Bc).map_err(|why| {
        format!(
            "fio computes values holding $keywords and + - * / with bc, which fails here: {why}"
        )
    })?;
    let text = if computed.is_float {
        format!("{}", computed.float)
    } else {
        computed.int.to_string()
    };
    Ok(format!("{}={}", &line[..eq], text))
}

fn expand_env(line: &str, ctx: &ParseContext) -> String {
    let mut out = String::with_capacity(line.len());
    let rest = split_env_references(line, |literal, name| {
        out.push_str(literal);
        if let Some(value) = ctx.env.get(name) {
            out.push_str(value);
        }
    });
    out.push_str(rest);
    out
}

/// Calls `each(text before, NAME)` for every `${NAME}` in `line`, in order, and returns the
/// text after the last one.
fn split_env_references<'a>(line: &'a str, mut each: impl FnMut(&'a str, &'a str)) -> &'a str {
    let mut rest = line;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        each(&rest[..start], &rest[start + 2..start + len]);
        rest = &rest[start + len + 1..];
    }
    rest
}

/// The environment variables a job file's text refers to (`${NAME}`), each once, sorted: what
/// a run description must record so the run repeats without the caller's environment.
pub fn env_references(text: &str) -> Vec<String> {
    let mut names = std::collections::BTreeSet::new();
    for line in text.lines() {
        split_env_references(line, |_, name| {
            names.insert(name.to_string());
        });
    }
    names.into_iter().collect()
}

fn replace_keywords(line: &str, ctx: &ParseContext) -> (String, bool) {
    let keywords = [
        ("$pagesize", ctx.pagesize),
        ("$mb_memory", ctx.mb_memory),
        ("$ncpus", ctx.ncpus),
    ];
    let mut out = line.to_string();
    let mut replaced = false;
    for (word, value) in keywords {
        if out.contains(word) {
            out = out.replace(word, &value.to_string());
            replaced = true;
        }
    }
    (out, replaced)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> ParseContext {
        let mut ctx = ParseContext::fixed(4096, 2048, 4);
        ctx.env.insert("FILENAME".into(), "/dev/sdb".into());
        ctx
    }

    #[test]
    fn env_variables_expand_and_unset_ones_vanish() {
        assert_eq!(
            expand_line("filename=${FILENAME}", &ctx()).unwrap(),
            "filename=/dev/sdb"
        );
        assert_eq!(
            expand_line("filename=x${NOPE}y", &ctx()).unwrap(),
            "filename=xy"
        );
        assert_eq!(
            expand_line("filename=${OPEN", &ctx()).unwrap(),
            "filename=${OPEN"
        );
    }

    #[test]
    fn env_references_lists_each_name_once_and_skips_unclosed_ones() {
        let text = "size=${SIZE}\nfilename=${DIR}/a${DIR}\n; ${COMMENTED}\nbs=${OPEN";
        assert_eq!(env_references(text), ["COMMENTED", "DIR", "SIZE"]);
    }

    #[test]
    fn keywords_expand_and_math_goes_through_bc() {
        assert_eq!(expand_line("numjobs=$ncpus", &ctx()).unwrap(), "numjobs=4");
        assert_eq!(
            expand_line("size=8*$mb_memory", &ctx()).unwrap(),
            "size=16384"
        );
        assert_eq!(expand_line("bs=$pagesize/2+1", &ctx()).unwrap(), "bs=2049");
        // No keyword: no bc, the value stays as written.
        assert_eq!(expand_line("size=8*1024", &ctx()).unwrap(), "size=8*1024");
        // bc cannot compute a path.
        assert!(expand_line("filename=/tmp/f$ncpus", &ctx()).is_err());
    }
}
