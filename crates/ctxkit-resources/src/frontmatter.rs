//! YAML frontmatter of markdown resources (skills, prompt templates): extraction with the
//! reference's delimiter rules and YAML 1.2 parsing into JSON values.

use saphyr::{LoadableYamlNode, Scalar, Yaml};
use serde_json::{Map, Value};

use crate::error::FrontmatterError;

/// A markdown document split into frontmatter and body.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedMarkdown {
    /// The frontmatter as JSON: an object normally; `{}` when absent or empty; a scalar or array
    /// when the YAML document is one (then no keys are found).
    pub frontmatter: Value,
    /// The body: trimmed when frontmatter was present, the normalised text otherwise.
    pub body: String,
    /// Whether a frontmatter block was found.
    pub has_frontmatter: bool,
}

impl ParsedMarkdown {
    /// A frontmatter field, if the frontmatter is an object holding it.
    pub fn field(&self, key: &str) -> Option<&Value> {
        self.frontmatter.as_object()?.get(key)
    }
}

/// Splits `text` into frontmatter and body and parses the YAML.
///
/// Line endings are normalised; frontmatter must start at offset 0 with `---`; it ends at the
/// first `\n---` (which only needs to start a line). YAML errors carry 1-based line/column.
pub fn parse_frontmatter(text: &str) -> Result<ParsedMarkdown, FrontmatterError> {
    let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
    let no_frontmatter = |body: String| ParsedMarkdown {
        frontmatter: Value::Object(Map::new()),
        body,
        has_frontmatter: false,
    };
    if !normalized.starts_with("---") {
        return Ok(no_frontmatter(normalized));
    }
    let Some(relative_end) = normalized[3..].find("\n---") else {
        return Ok(no_frontmatter(normalized));
    };
    let end = relative_end + 3;
    // The first four characters are skipped blindly (`---` plus one), as the reference does.
    let yaml = normalized.get(4..end).unwrap_or("");
    let body = normalized[end + 4..].trim().to_owned();
    Ok(ParsedMarkdown {
        frontmatter: parse_yaml(yaml)?,
        body,
        has_frontmatter: true,
    })
}

/// Only the body of a markdown document (frontmatter removed), ignoring YAML errors.
pub fn strip_frontmatter(text: &str) -> String {
    match parse_frontmatter(text) {
        Ok(parsed) => parsed.body,
        Err(_) => {
            let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
            match normalized.get(3..).and_then(|rest| rest.find("\n---")) {
                Some(end) if normalized.starts_with("---") => {
                    normalized[end + 7..].trim().to_owned()
                }
                Some(_) | None => normalized,
            }
        }
    }
}

/// Deeper YAML is refused before a tree is built: building, converting and dropping the tree are
/// recursive, and a hostile skill or prompt file (`- - - …` or `[[[…`) would overflow the stack.
const MAX_YAML_DEPTH: usize = 128;

/// Walks the parser's events (an iterative parse) and refuses nesting beyond [`MAX_YAML_DEPTH`].
/// Syntax errors are left to the loader, which reports them (the depth up to them is bounded).
fn check_depth(source: &str) -> Result<(), FrontmatterError> {
    let mut depth = 0_usize;
    for event in saphyr_parser::Parser::new_from_str(source) {
        let Ok((event, span)) = event else {
            return Ok(());
        };
        if matches!(
            event,
            saphyr_parser::Event::SequenceStart(..) | saphyr_parser::Event::MappingStart(..)
        ) {
            depth += 1;
            if depth > MAX_YAML_DEPTH {
                let (line, column) =
                    clamp_position(source, span.start.line(), span.start.col() + 1);
                return Err(FrontmatterError {
                    message: format!("nested deeper than {MAX_YAML_DEPTH} levels"),
                    line,
                    column,
                });
            }
        } else if matches!(
            event,
            saphyr_parser::Event::SequenceEnd | saphyr_parser::Event::MappingEnd
        ) {
            depth = depth.saturating_sub(1);
        }
    }
    Ok(())
}

fn parse_yaml(source: &str) -> Result<Value, FrontmatterError> {
    check_depth(source)?;
    let documents = Yaml::load_from_str(source).map_err(|error| {
        let marker = error.marker();
        let (line, column) = clamp_position(source, marker.line(), marker.col() + 1);
        FrontmatterError {
            message: error.info().to_owned(),
            line,
            column,
        }
    })?;
    match documents.first() {
        Some(document) => {
            let value = to_json(document);
            Ok(if value.is_null() {
                Value::Object(Map::new())
            } else {
                value
            })
        }
        None => Ok(Value::Object(Map::new())),
    }
}

/// Errors found at end of input are reported by the parser on the line after the text; report
/// them at the end of the last line instead (where the reference's parser points).
fn clamp_position(source: &str, line: usize, column: usize) -> (usize, usize) {
    let lines: Vec<&str> = source.split('\n').collect();
    if line > lines.len()
        || (line == lines.len() && lines.last().is_some_and(|last| last.is_empty()) && line > 1)
    {
        let (index, last) = lines
            .iter()
            .enumerate()
            .rev()
            .find(|(_, text)| !text.is_empty())
            .map_or((0, ""), |(index, text)| (index, *text));
        return (index + 1, last.chars().count() + 1);
    }
    (line.max(1), column)
}

fn to_json(node: &Yaml<'_>) -> Value {
    match node {
        Yaml::Value(scalar) => scalar_to_json(scalar),
        Yaml::Sequence(items) => Value::Array(items.iter().map(to_json).collect()),
        Yaml::Mapping(mapping) => {
            let mut object = Map::new();
            for (key, value) in mapping {
                object.insert(key_to_string(key), to_json(value));
            }
            Value::Object(object)
        }
        Yaml::Tagged(_, inner) => to_json(inner),
        Yaml::Representation(text, _, _) => Value::from(text.as_ref()),
        Yaml::Alias(_) | Yaml::BadValue => Value::Null,
    }
}

fn scalar_to_json(scalar: &Scalar<'_>) -> Value {
    match scalar {
        Scalar::Null => Value::Null,
        Scalar::Boolean(value) => Value::Bool(*value),
        Scalar::Integer(value) => Value::from(*value),
        Scalar::FloatingPoint(value) => {
            serde_json::Number::from_f64(value.into_inner()).map_or(Value::Null, Value::Number)
        }
        Scalar::String(text) => Value::from(text.as_ref()),
    }
}

fn key_to_string(key: &Yaml<'_>) -> String {
    match to_json(key) {
        Value::String(text) => text,
        Value::Null => "null".to_owned(),
        other @ (Value::Bool(_) | Value::Number(_) | Value::Array(_) | Value::Object(_)) => {
            other.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deep_nesting_is_refused_before_it_is_built() {
        for nested in [
            format!("\n  {}1", "- ".repeat(100_000)),
            format!(" {}", "[".repeat(100_000)),
            format!(" {}", "{a: ".repeat(100_000)),
        ] {
            let text = format!("---\nname: x\nitems:{nested}\n---\nbody\n");
            let error = parse_frontmatter(&text).unwrap_err();
            // The parser has a limit of its own for flow collections.
            assert!(
                error.message.contains("nested deeper than 128")
                    || error.message.contains("recursion limit exceeded"),
                "{error}"
            );
        }
        let fine = format!("---\nitems: {}1{}\n---\n", "[".repeat(100), "]".repeat(100));
        let parsed = parse_frontmatter(&fine).unwrap();
        assert!(parsed.field("items").is_some_and(Value::is_array));
    }

    /// Frontmatter is read only from `---` fences at the very start of the text (CRLF normalized, a
    /// byte-order mark prevents it); an unterminated fence leaves the text as body, comments make an
    /// empty map, and invalid YAML (reported with its position) and repeated keys are errors.
    #[test]
    fn frontmatter_is_read_only_between_closed_fences_at_the_start() {
        let parsed = parse_frontmatter("---\r\nname: test\r\n---\r\nLine one\r\nLine two").unwrap();
        assert_eq!(parsed.field("name"), Some(&json!("test")));
        assert_eq!(parsed.body, "Line one\nLine two");

        let text = "---\nname: test\nBody without terminator";
        let parsed = parse_frontmatter(text).unwrap();
        assert!(!parsed.has_frontmatter);
        assert_eq!(parsed.body, text);

        let text = "\n  No frontmatter body  \n";
        assert_eq!(parse_frontmatter(text).unwrap().body, text);

        let parsed = parse_frontmatter("---\n# just a comment\n---\nBody").unwrap();
        assert_eq!(parsed.frontmatter, json!({}));
        assert_eq!(parsed.body, "Body");

        let error = parse_frontmatter("---\nfoo: [bar\n---\nBody").unwrap_err();
        assert!(
            error.to_string().contains("at line 1, column 10"),
            "{error}"
        );

        assert!(parse_frontmatter("---\na: 1\na: 2\n---\nBody").is_err());

        let parsed = parse_frontmatter("\u{feff}---\nname: x\n---\nBody").unwrap();
        assert!(!parsed.has_frontmatter);
    }

    /// Frontmatter reads block scalars, and scalars by the YAML 1.2 core schema (`yes` stays a string).
    #[test]
    fn frontmatter_reads_block_scalars_with_the_yaml_core_schema() {
        let parsed =
            parse_frontmatter("---\ndescription: |\n  Line one\n  Line two\n---\n\nBody").unwrap();
        assert_eq!(
            parsed.field("description"),
            Some(&json!("Line one\nLine two\n"))
        );
        assert_eq!(parsed.body, "Body");
        let parsed = parse_frontmatter("---\nx: yes\ny: true\nz: 2024-01-01\nn: 3\n---\n").unwrap();
        assert_eq!(
            parsed.frontmatter,
            json!({"x": "yes", "y": true, "z": "2024-01-01", "n": 3})
        );
    }

    #[test]
    fn quirks_of_the_closing_delimiter() {
        let parsed = parse_frontmatter("---\nname: a\n----\nbody").unwrap();
        assert_eq!(parsed.body, "-\nbody");
        let parsed = parse_frontmatter("---\n---\nbody").unwrap();
        assert_eq!(
            (parsed.frontmatter.clone(), parsed.body.as_str()),
            (json!({}), "body")
        );
        let parsed = parse_frontmatter("---name: a\n---\nbody").unwrap();
        assert_eq!(parsed.frontmatter, json!({"ame": "a"}));
        let error = parse_frontmatter("---\ndescription: a: b\n---\n").unwrap_err();
        assert!(error.to_string().contains("at line 1"), "{error}");
    }
}
