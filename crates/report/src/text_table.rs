//! Aligned text tables for the listings whose format is iosched's own (`devices`, `knobs`,
//! `schedulers`, `calibrate`, `replay`'s comparison, `reproduce`'s verdicts), laid out by
//! `comfy-table`: no borders, columns two spaces apart, the columns named as numeric
//! right-aligned, and no wrapping, so a listing reads the same on a terminal, in a pipe and
//! in a test. Every column is as wide as its widest cell, counted in displayed characters
//! (`µs`, `✓`), which hand-written `{:<N}` padding got wrong once a value outgrew `N`
//! (`queue_depth=1024` pushed its row out of line). fio's and mmtests' formats keep their
//! own printers, byte for byte.

use comfy_table::{presets, CellAlignment, ContentArrangement, Table};

/// A table being filled: a header (or none), rows of cells, right-aligned columns.
pub struct TextTable {
    table: Table,
    right: Vec<usize>,
    indent: usize,
}

impl TextTable {
    /// A table with `header` as its first line; an empty `header` prints none.
    pub fn new(header: &[&str]) -> TextTable {
        let mut table = Table::new();
        table
            .load_preset(presets::NOTHING)
            .set_content_arrangement(ContentArrangement::Disabled);
        if !header.is_empty() {
            table.set_header(header.to_vec());
        }
        TextTable {
            table,
            right: Vec::new(),
            indent: 0,
        }
    }

    /// Right-aligns columns `columns` (counted from 0): figures line up on their last digit.
    pub fn right_aligned(mut self, columns: &[usize]) -> TextTable {
        self.right = columns.to_vec();
        self
    }

    /// Starts every line with `spaces` spaces (a table under a heading).
    pub fn indented(mut self, spaces: usize) -> TextTable {
        self.indent = spaces;
        self
    }

    /// Adds a row; a row shorter than the others leaves its last cells empty.
    pub fn row<S: ToString>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut TextTable {
        let cells: Vec<String> = cells.into_iter().map(|cell| cell.to_string()).collect();
        self.table.add_row(cells);
        self
    }

    /// The lines, each ended by a newline, without trailing spaces.
    pub fn render(mut self) -> String {
        let last = self.table.column_count().saturating_sub(1);
        for (index, column) in self.table.column_iter_mut().enumerate() {
            column.set_padding((0, if index == last { 0 } else { 2 }));
            if self.right.contains(&index) {
                column.set_cell_alignment(CellAlignment::Right);
            }
        }
        let margin = " ".repeat(self.indent);
        let mut out = String::new();
        for line in self.table.lines() {
            out.push_str(&margin);
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Columns are as wide as their widest cell (in displayed characters), two spaces apart,
    /// figures right-aligned, no trailing spaces, the indent on every line.
    #[test]
    fn columns_fit_their_widest_cell() {
        let mut table = TextTable::new(&["name", "qd", "note"])
            .right_aligned(&[1])
            .indented(2);
        table.row(["hdd", "31", "µs ✓"]);
        table.row(["nvme-gen4", "1024", "x"]);
        assert_eq!(
            table.render(),
            "  name         qd  note\n  hdd          31  µs ✓\n  nvme-gen4  1024  x\n"
        );
        let mut bare = TextTable::new(&[]);
        bare.row(["a", "b"]);
        assert_eq!(bare.render(), "a  b\n");
    }
}
