//! Arithmetic in option values: fio's `(...)` expressions and its `bc` fallback.
//!
//! Two different evaluators hide behind fio's arithmetic, and they disagree on details:
//!
//! * A value that **starts with `(`** goes to fio's built-in yacc grammar
//!   (`evaluate_arithmetic_expression()`): `+ - * / % ^`, unary minus, decimal numbers and
//!   `0x` hex, and unit suffixes bound to the number just before them (`(2*4k)`). Its
//!   precedence is unusual: `%` binds tighter than `^`, which binds tighter than `* /`.
//!   Size suffixes are fixed (`k` = 1024, `KiB` = 1000, whatever `kb_base` says); in time
//!   values a bare number means **microseconds** (formats.md §1.2).
//! * A value in which a reserved keyword (`$pagesize`, `$mb_memory`, `$ncpus`) was replaced
//!   and which contains `+ - * /` is piped through the external `bc` program
//!   (`fio_keyword_replace()` / `bc_calc()`): integer arithmetic with bc's usual precedence
//!   and no unit suffixes. We evaluate it here so results do not depend on `bc` being
//!   installed.
//!
//! Integers stay integers (checked, overflow is an error); a decimal operand turns the
//! expression into floating point and the result is truncated, as fio does.

/// Which evaluator, and so which suffixes and precedences, apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ExprMode {
    /// Byte values: `k m g t p` (optionally with `b`) are powers of 1024, `kib...` of 1000.
    Size,
    /// Time values, in microseconds: `us ms s m h d`; bare numbers are microseconds.
    Time,
    /// `bc`: no suffixes, `%` with `* /`, `^` above them.
    Bc,
}

/// A value as the yacc grammar carries it: an integer, or a float when a decimal took part.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Value {
    pub int: i64,
    pub float: f64,
    pub is_float: bool,
}

impl Value {
    fn int(v: i64) -> Value {
        Value {
            int: v,
            float: v as f64,
            is_float: false,
        }
    }

    fn float(v: f64) -> Value {
        Value {
            int: v as i64,
            float: v,
            is_float: true,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Num(Value),
    /// A unit suffix: its multiplier.
    Suffix(Value),
    Op(char),
}

/// Evaluate `text` (the whole expression, parentheses included).
pub(crate) fn eval(text: &str, mode: ExprMode) -> Result<Value, String> {
    let tokens = tokenize(text, mode)?;
    let mut parser = Parser {
        tokens,
        pos: 0,
        mode,
    };
    let value = parser.expression(0)?;
    if parser.pos != parser.tokens.len() {
        return Err(format!(
            "cannot evaluate '{}': unexpected text",
            text.trim()
        ));
    }
    Ok(value)
}

fn tokenize(text: &str, mode: ExprMode) -> Result<Vec<Token>, String> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i] as char;
        if c == ' ' || c == '\t' {
            i += 1;
        } else if c.is_ascii_digit()
            || (c == '.' && i + 1 < bytes.len() && bytes[i + 1].is_ascii_digit())
        {
            let start = i;
            if c == '0' && i + 1 < bytes.len() && (bytes[i + 1] == b'x' || bytes[i + 1] == b'X') {
                i += 2;
                let digits_start = i;
                while i < bytes.len() && bytes[i].is_ascii_hexdigit() {
                    i += 1;
                }
                let v = i64::from_str_radix(&text[digits_start..i], 16)
                    .map_err(|_| format!("bad hex number '{}'", &text[start..i]))?;
                tokens.push(Token::Num(Value::int(v)));
                continue;
            }
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            if i < bytes.len() && bytes[i] == b'.' {
                i += 1;
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                let v: f64 = text[start..i]
                    .parse()
                    .map_err(|_| format!("bad number '{}'", &text[start..i]))?;
                tokens.push(Token::Num(Value::float(v)));
            } else {
                let v: i64 = text[start..i]
                    .parse()
                    .map_err(|_| format!("number '{}' too large", &text[start..i]))?;
                tokens.push(Token::Num(Value::int(v)));
            }
        } else if c.is_ascii_alphabetic() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                i += 1;
            }
            let word = text[start..i].to_ascii_lowercase();
            let mult = suffix_multiplier(&word, mode)
                .ok_or_else(|| format!("unknown unit '{}' in expression", &text[start..i]))?;
            tokens.push(Token::Suffix(Value::int(mult)));
        } else if "+-*/%^()".contains(c) {
            tokens.push(Token::Op(c));
            i += 1;
        } else {
            return Err(format!("unexpected character '{c}' in expression"));
        }
    }
    Ok(tokens)
}

/// Unit suffixes the expression lexer knows, with their multipliers.
fn suffix_multiplier(word: &str, mode: ExprMode) -> Option<i64> {
    const KI: i64 = 1024;
    match mode {
        ExprMode::Bc => None,
        ExprMode::Size => Some(match word {
            "k" | "kb" => KI,
            "m" | "mb" => KI * KI,
            "g" | "gb" => KI * KI * KI,
            "t" | "tb" => KI * KI * KI * KI,
            "p" | "pb" => KI * KI * KI * KI * KI,
            "kib" => 1000,
            "mib" => 1000 * 1000,
            "gib" => 1000 * 1000 * 1000,
            "tib" => 1000 * 1000 * 1000 * 1000,
            "pib" => 1000 * 1000 * 1000 * 1000 * 1000,
            _ => return None,
        }),
        ExprMode::Time => Some(match word {
            "us" | "usec" => 1,
            "ms" | "msec" => 1000,
            "s" => 1_000_000,
            "m" => 60 * 1_000_000,
            "h" => 3600 * 1_000_000,
            "d" => 24 * 3600 * 1_000_000,
            _ => return None,
        }),
    }
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    mode: ExprMode,
}

/// Binding power of unary minus: above every binary operator in both grammars.
const UNARY_BP: u8 = 50;

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    /// (left, right) binding powers; right < left makes an operator right-associative.
    fn binding_power(&self, op: char) -> Option<(u8, u8)> {
        let yacc = self.mode != ExprMode::Bc;
        Some(match op {
            '+' | '-' => (10, 11),
            '*' | '/' => (20, 21),
            '%' if yacc => (40, 41),
            '%' => (20, 21),
            '^' => (31, 30),
            _ => return None,
        })
    }

    fn expression(&mut self, min_bp: u8) -> Result<Value, String> {
        let mut lhs = match self.peek().cloned() {
            Some(Token::Num(v)) => {
                self.pos += 1;
                v
            }
            Some(Token::Op('(')) => {
                self.pos += 1;
                let inner = self.expression(0)?;
                if self.peek() != Some(&Token::Op(')')) {
                    return Err("missing ')' in expression".to_string());
                }
                self.pos += 1;
                inner
            }
            Some(Token::Op('-')) => {
                self.pos += 1;
                let operand = self.expression(UNARY_BP)?;
                negate(operand)?
            }
            Some(Token::Suffix(_)) => return Err("unit without a number".to_string()),
            Some(Token::Op(op)) => return Err(format!("unexpected '{op}' in expression")),
            None => return Err("incomplete expression".to_string()),
        };
        loop {
            match self.peek().cloned() {
                // A unit binds to what is immediately before it, tighter than anything.
                Some(Token::Suffix(mult)) => {
                    self.pos += 1;
                    lhs = apply('*', lhs, mult)?;
                }
                Some(Token::Op(op)) => {
                    let Some((left_bp, right_bp)) = self.binding_power(op) else {
                        break;
                    };
                    if left_bp < min_bp {
                        break;
                    }
                    self.pos += 1;
                    let rhs = self.expression(right_bp)?;
                    lhs = apply(op, lhs, rhs)?;
                }
                Some(Token::Num(_)) => return Err("two numbers without an operator".to_string()),
                None => break,
            }
        }
        Ok(lhs)
    }
}

fn negate(v: Value) -> Result<Value, String> {
    if v.is_float {
        Ok(Value::float(-v.float))
    } else {
        v.int.checked_neg().map(Value::int).ok_or_else(overflow)
    }
}

fn overflow() -> String {
    "arithmetic overflow".to_string()
}

fn apply(op: char, a: Value, b: Value) -> Result<Value, String> {
    if a.is_float || b.is_float {
        let (x, y) = (a.float, b.float);
        let r = match op {
            '+' => x + y,
            '-' => x - y,
            '*' => x * y,
            '/' if y == 0.0 => return Err("division by zero".to_string()),
            '/' => x / y,
            '%' => return Err("modulo of a decimal number".to_string()),
            '^' => x.powf(y),
            _ => unreachable!("operator {op} has no binding power"),
        };
        if !r.is_finite() {
            return Err(overflow());
        }
        return Ok(Value::float(r));
    }
    let (x, y) = (a.int, b.int);
    let r = match op {
        '+' => x.checked_add(y),
        '-' => x.checked_sub(y),
        '*' => x.checked_mul(y),
        '/' | '%' if y == 0 => return Err("division by zero".to_string()),
        '/' => x.checked_div(y),
        '%' => x.checked_rem(y),
        '^' if y < 0 => return Ok(Value::float((x as f64).powf(y as f64))),
        '^' => u32::try_from(y).ok().and_then(|e| x.checked_pow(e)),
        _ => unreachable!("operator {op} has no binding power"),
    };
    r.map(Value::int).ok_or_else(overflow)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(text: &str, mode: ExprMode) -> i64 {
        eval(text, mode).unwrap().int
    }

    #[test]
    fn precedence_of_fio_grammar_puts_modulo_above_power_above_product() {
        assert_eq!(int("(1+2*3)", ExprMode::Size), 7);
        // yacc: % binds tighter than ^: 2^(5%3) = 4; bc: (2^5)%3 = 2.
        assert_eq!(int("(2^5%3)", ExprMode::Size), 4);
        assert_eq!(int("2^5%3", ExprMode::Bc), 2);
        assert_eq!(int("(2^3^2)", ExprMode::Size), 512);
        assert_eq!(int("(-2+10)", ExprMode::Size), 8);
        assert_eq!(int("(7/2)", ExprMode::Size), 3);
    }

    #[test]
    fn units_bind_to_the_number_before_them() {
        assert_eq!(int("(2*4k)", ExprMode::Size), 8192);
        assert_eq!(int("(1+1)k", ExprMode::Size), 2048);
        assert_eq!(int("(10KiB)", ExprMode::Size), 10000);
        assert_eq!(int("(1.5*1k)", ExprMode::Size), 1536);
        assert_eq!(int("(2ms+5)", ExprMode::Time), 2005);
        assert_eq!(int("(1m)", ExprMode::Time), 60_000_000);
    }

    #[test]
    fn malformed_expressions_are_errors() {
        assert!(eval("(1+)", ExprMode::Size).is_err());
        assert!(eval("(1/0)", ExprMode::Size).is_err());
        assert!(eval("(4q)", ExprMode::Size).is_err());
        assert!(eval("8*4k", ExprMode::Bc).is_err());
        assert!(eval("(2^70)", ExprMode::Size).is_err());
        assert!(eval("(1 2)", ExprMode::Size).is_err());
    }
}
