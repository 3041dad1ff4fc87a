//! Scenario tests per BFQ rule.
