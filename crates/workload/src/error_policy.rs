//! fio's `continue_on_error=` and `ignore_error=`: which failed I/Os a job survives.
//!
//! fio stops a job at its first error unless `continue_on_error` names the error's type
//! (read, write or verify) *and* the error is on that type's list: by default EIO and EILSEQ,
//! or the list `ignore_error=` gives. Its syntax is fio's parser's, not its manual's example:
//! the types' lists are separated by `,` (read, write, verify) and the errors within a list
//! by `:` (`ignore_error=EAGAIN,ENOSPC:122` ignores EAGAIN on reads, ENOSPC and 122 on
//! writes); an error is a name EPERM..ERANGE (case matters) or a number; a list given
//! replaces the default for its type and turns `continue_on_error` on for it
//! (`ignore_error_type()` in fio's `options.c`, checked against fio 3.33 on a device that
//! fails every read). `td_non_fatal_error()` in fio's `io_u.c` applies it; a survived error
//! is counted (`total_err`, `first_error`) and the job goes on.

/// The error types fio tells apart (`enum error_type_bit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorType {
    Read = 0,
    Write = 1,
    Verify = 2,
}

/// EIO and EILSEQ: the errors fio calls non-fatal unless told otherwise.
const DEFAULT_NON_FATAL: [i32; 2] = [5, 84];

/// Linux's errno names 1..=34 in order, the ones fio's `str2error()` knows by name.
const ERRNO_NAMES: [&str; 34] = [
    "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG", "ENOEXEC", "EBADF", "ECHILD",
    "EAGAIN", "ENOMEM", "EACCES", "EFAULT", "ENOTBLK", "EBUSY", "EEXIST", "EXDEV", "ENODEV",
    "ENOTDIR", "EISDIR", "EINVAL", "ENFILE", "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC",
    "ESPIPE", "EROFS", "EMLINK", "EPIPE", "EDOM", "ERANGE",
];

/// A job's error policy.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorPolicy {
    /// Bit `ErrorType as u8` set: errors of that type may be survived.
    pub continue_mask: u8,
    /// Per type, the survivable errors `ignore_error=` listed (`None`: EIO and EILSEQ).
    pub ignore: [Option<Vec<i32>>; 3],
}

impl ErrorPolicy {
    /// `continue_on_error=none|read|write|io|verify|all|0|1`.
    pub fn set_continue(&mut self, value: &str) -> Result<(), String> {
        self.continue_mask = match value.trim() {
            "none" | "0" => 0,
            "read" => 1,
            "write" => 2,
            "io" => 3,
            "verify" => 4,
            "all" | "1" => 7,
            other => {
                return Err(format!(
                "unknown continue_on_error '{other}' (none, read, write, io, verify, all, 0 or 1)"
            ))
            }
        };
        Ok(())
    }

    /// `ignore_error=READ_LIST,WRITE_LIST,VERIFY_LIST`, each list `E1:E2:...`.
    pub fn set_ignore(&mut self, value: &str) -> Result<(), String> {
        let lists: Vec<&str> = value.split(',').collect();
        if lists.len() > 3 {
            return Err(format!(
                "'{value}': at most three lists (read,write,verify; errors within one by ':')"
            ));
        }
        for (slot, list) in lists.into_iter().enumerate() {
            // fio stops a list at its first empty entry.
            let errors = list
                .split(':')
                .map(str::trim)
                .take_while(|e| !e.is_empty())
                .map(errno_of)
                .collect::<Result<Vec<_>, _>>()?;
            if !errors.is_empty() {
                self.ignore[slot] = Some(errors);
                self.continue_mask |= 1 << slot;
            }
        }
        Ok(())
    }

    /// Whether the job continues after `errno` on an I/O of type `kind`.
    pub fn survives(&self, kind: ErrorType, errno: i32) -> bool {
        if self.continue_mask & (1 << kind as u8) == 0 {
            return false;
        }
        match &self.ignore[kind as usize] {
            Some(list) => list.contains(&errno),
            None => DEFAULT_NON_FATAL.contains(&errno),
        }
    }

    /// Whether `continue_on_error` is set at all (fio then reports `total_err`).
    pub fn continues(&self) -> bool {
        self.continue_mask != 0
    }
}

/// An errno by name (`EINVAL`: one starting with `E`, matched exactly) or number (its
/// leading digits, as C's `atoi`, sign dropped); 0 is no error.
fn errno_of(text: &str) -> Result<i32, String> {
    let number = if text.starts_with('E') {
        ERRNO_NAMES
            .iter()
            .position(|name| *name == text)
            .map_or(0, |index| index as i32 + 1)
    } else {
        let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
        let digits: String = unsigned.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<i32>().unwrap_or(0)
    };
    if number == 0 {
        return Err(format!(
            "unknown error '{text}' (a name EPERM..ERANGE, or a number)"
        ));
    }
    Ok(number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_listed_errors_of_a_continued_type_are_survived() {
        let mut policy = ErrorPolicy::default();
        assert!(!policy.survives(ErrorType::Read, 5), "none by default");
        policy.set_continue("read").unwrap();
        assert!(policy.survives(ErrorType::Read, 5));
        assert!(policy.survives(ErrorType::Read, 84));
        assert!(
            !policy.survives(ErrorType::Read, 22),
            "EINVAL is fatal by default"
        );
        assert!(
            !policy.survives(ErrorType::Write, 5),
            "writes not continued"
        );
        policy.set_ignore("EINVAL").unwrap();
        assert!(policy.survives(ErrorType::Read, 22));
        assert!(
            !policy.survives(ErrorType::Read, 5),
            "a list replaces the default"
        );
    }

    #[test]
    fn commas_separate_types_and_colons_errors_as_fio_parses_them() {
        let mut policy = ErrorPolicy::default();
        policy.set_ignore("EAGAIN,ENOSPC:122").unwrap();
        assert_eq!(policy.continue_mask, 0b011, "a list turns its type on");
        assert!(policy.survives(ErrorType::Read, 11));
        assert!(!policy.survives(ErrorType::Read, 28));
        assert!(policy.survives(ErrorType::Write, 28));
        assert!(policy.survives(ErrorType::Write, 122));
        assert!(
            !policy.survives(ErrorType::Verify, 5),
            "verify not turned on"
        );
        // fio 3.33 on a device failing every read with EINVAL: `EIO,EINVAL` stops at the
        // first (EINVAL is the write list), `EINVAL,EIO` and `22:5` go on.
        let mut policy = ErrorPolicy::default();
        policy.set_ignore("EIO,EINVAL").unwrap();
        assert!(!policy.survives(ErrorType::Read, 22));
        let mut policy = ErrorPolicy::default();
        policy.set_ignore("5:22").unwrap();
        assert!(policy.survives(ErrorType::Read, 22));
    }

    #[test]
    fn bad_lists_are_refused() {
        let mut policy = ErrorPolicy::default();
        assert!(policy.set_ignore("EBOGUS").is_err());
        assert!(
            policy.set_ignore("einval").is_err(),
            "names are case-sensitive"
        );
        assert!(policy.set_ignore("1,2,3,4").is_err());
        assert!(policy.set_ignore("0").is_err());
        assert!(policy.set_continue("sometimes").is_err());
    }
}
