//! The label-selector lexer and recursive-descent parser, token for token as upstream's `labels` package.

use super::{Operator, Requirement, SelectorError};
use crate::validation::format::{go_quote, is_qualified_name};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    End,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

/// Whether `in`/`notin` are operators (after a key) or plain identifiers (everywhere else).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

fn keyword(s: &str) -> Option<Tok> {
    Some(match s {
        ")" => Tok::ClosedPar,
        "," => Tok::Comma,
        "!" => Tok::DoesNotExist,
        "==" => Tok::DoubleEquals,
        "=" => Tok::Equals,
        ">" => Tok::GreaterThan,
        "in" => Tok::In,
        "<" => Tok::LessThan,
        "!=" => Tok::NotEquals,
        "notin" => Tok::NotIn,
        "(" => Tok::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(c: u8) -> bool {
    matches!(c, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Splits the input into tokens; the list always ends with [`Tok::End`].
fn scan(input: &str) -> Vec<(Tok, String)> {
    let bytes = input.as_bytes();
    let mut pos = 0;
    let mut items = Vec::new();
    // Upstream reads bytes and treats a NUL byte like the end of the string; keep that.
    let at = |i: usize| bytes.get(i).copied().filter(|&c| c != 0);
    loop {
        while at(pos).is_some_and(is_whitespace) {
            pos += 1;
        }
        let Some(c) = at(pos) else {
            items.push((Tok::End, String::new()));
            return items;
        };
        let start = pos;
        if is_special(c) {
            // Greedy: extend the symbol while the longer text is still a token ("!=" and "==").
            let mut end = pos + 1;
            while at(end).is_some_and(is_special) && keyword(&input[start..=end]).is_some() {
                end += 1;
            }
            pos = end;
            let lit = &input[start..end];
            // Every single special symbol is a token, so this lookup cannot miss.
            items.push((keyword(lit).unwrap_or(Tok::Identifier), lit.to_string()));
        } else {
            while at(pos).is_some_and(|c| !is_special(c) && !is_whitespace(c)) {
                pos += 1;
            }
            // Identifiers end on ASCII bytes only, so slicing stays on character boundaries.
            let lit = &input[start..pos];
            items.push((keyword(lit).unwrap_or(Tok::Identifier), lit.to_string()));
        }
    }
}

struct Parser {
    items: Vec<(Tok, String)>,
    position: usize,
}

impl Parser {
    fn item(&self, ctx: Context) -> (Tok, String) {
        let idx = self.position.min(self.items.len().saturating_sub(1));
        let (tok, lit) = self
            .items
            .get(idx)
            .cloned()
            .unwrap_or((Tok::End, String::new()));
        match (ctx, tok) {
            (Context::Values, Tok::In | Tok::NotIn) => (Tok::Identifier, lit),
            _ => (tok, lit),
        }
    }

    fn lookahead(&self, ctx: Context) -> (Tok, String) {
        self.item(ctx)
    }

    fn consume(&mut self, ctx: Context) -> (Tok, String) {
        let item = self.item(ctx);
        self.position += 1;
        item
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, SelectorError> {
        let mut requirements = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Context::Values);
            match tok {
                Tok::Identifier | Tok::DoesNotExist => {
                    let r = self.parse_requirement().map_err(|e| {
                        SelectorError::new(format!("unable to parse requirement: {e}"))
                    })?;
                    requirements.push(r);
                    let (t, l) = self.consume(Context::Values);
                    match t {
                        Tok::End => return Ok(requirements),
                        Tok::Comma => {
                            let (t2, l2) = self.lookahead(Context::Values);
                            if t2 != Tok::Identifier && t2 != Tok::DoesNotExist {
                                return Err(SelectorError::new(format!(
                                    "found '{l2}', expected: identifier after ','"
                                )));
                            }
                        }
                        _ => {
                            return Err(SelectorError::new(format!(
                                "found '{l}', expected: ',' or 'end of string'"
                            )));
                        }
                    }
                }
                Tok::End => return Ok(requirements),
                _ => {
                    return Err(SelectorError::new(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    )));
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, String> {
        let (key, inferred) = self.parse_key_and_infer_operator()?;
        if let Some(op) = inferred {
            return Requirement::new(&key, op, Vec::new()).map_err(|e| e.message);
        }
        let operator = self.parse_operator()?;
        let mut values = match operator {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        // Upstream collects values in a string set and hands over its sorted list.
        values.sort();
        values.dedup();
        Requirement::new(&key, operator, values).map_err(|e| e.message)
    }

    /// Reads `[!]key`; the operator is inferred (exists / does-not-exist) when nothing but `,` or the end follows.
    fn parse_key_and_infer_operator(&mut self) -> Result<(String, Option<Operator>), String> {
        let (mut tok, mut lit) = self.consume(Context::Values);
        let mut operator = None;
        if tok == Tok::DoesNotExist {
            operator = Some(Operator::DoesNotExist);
            (tok, lit) = self.consume(Context::Values);
        }
        if tok != Tok::Identifier {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        let errs = is_qualified_name(&lit);
        if !errs.is_empty() {
            // The parser has no field path, and upstream prints the missing path as "<nil>".
            return Err(format!(
                "<nil>: Invalid value: {}: {}",
                go_quote(&lit),
                errs.join("; ")
            ));
        }
        let (next, _) = self.lookahead(Context::Values);
        if (next == Tok::End || next == Tok::Comma) && operator.is_none() {
            operator = Some(Operator::Exists);
        }
        Ok((lit, operator))
    }

    fn parse_operator(&mut self) -> Result<Operator, String> {
        let (tok, lit) = self.consume(Context::KeyAndOperator);
        Ok(match tok {
            Tok::In => Operator::In,
            Tok::Equals => Operator::Equals,
            Tok::DoubleEquals => Operator::DoubleEquals,
            Tok::GreaterThan => Operator::GreaterThan,
            Tok::LessThan => Operator::LessThan,
            Tok::NotIn => Operator::NotIn,
            Tok::NotEquals => Operator::NotEquals,
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        })
    }

    fn parse_values(&mut self) -> Result<Vec<String>, String> {
        let (tok, lit) = self.consume(Context::Values);
        if tok != Tok::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.lookahead(Context::Values);
        match tok {
            Tok::Identifier | Tok::Comma => {
                let values = self.parse_identifiers_list()?;
                let (tok, _) = self.consume(Context::Values);
                if tok != Tok::ClosedPar {
                    // Upstream reports the literal it saw before the list here, not the offending one.
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(values)
            }
            Tok::ClosedPar => {
                self.consume(Context::Values);
                // "()" is the set holding only the empty value, not an empty set.
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    /// A possibly empty, comma-separated list of possibly empty identifiers, up to (not including) `)`.
    fn parse_identifiers_list(&mut self) -> Result<Vec<String>, String> {
        let mut values: Vec<String> = Vec::new();
        loop {
            let (tok, lit) = self.consume(Context::Values);
            match tok {
                Tok::Identifier => {
                    values.push(lit);
                    let (tok2, lit2) = self.lookahead(Context::Values);
                    match tok2 {
                        Tok::Comma => {}
                        Tok::ClosedPar => return Ok(values),
                        _ => return Err(format!("found '{lit2}', expected: ',' or ')'")),
                    }
                }
                Tok::Comma => {
                    // Empty elements: "(,a", "a,)" and "a,,b" all contribute the empty value.
                    if values.is_empty() {
                        values.push(String::new());
                    }
                    let (tok2, _) = self.lookahead(Context::Values);
                    if tok2 == Tok::ClosedPar {
                        values.push(String::new());
                        return Ok(values);
                    }
                    if tok2 == Tok::Comma {
                        self.consume(Context::Values);
                        values.push(String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn parse_exact_value(&mut self) -> Result<Vec<String>, String> {
        let (tok, _) = self.lookahead(Context::Values);
        if tok == Tok::End || tok == Tok::Comma {
            return Ok(vec![String::new()]);
        }
        let (tok, lit) = self.consume(Context::Values);
        if tok == Tok::Identifier {
            return Ok(vec![lit]);
        }
        Err(format!("found '{lit}', expected: identifier"))
    }
}

/// Parses a selector string into its requirements (unsorted).
pub(super) fn parse(input: &str) -> Result<Vec<Requirement>, SelectorError> {
    Parser {
        items: scan(input),
        position: 0,
    }
    .parse()
}
