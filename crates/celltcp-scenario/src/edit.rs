//! The scenario path editor: `key.path=value` edits of the TOML text, used by `--set`, by sweeps
//! and by the Python API (`celltcp._core.apply_overrides`), so that a path means the same
//! everywhere.
//!
//! A path is dotted keys. An element of a list of tables (`[[node]]`, `[[link]]`, `[[flow]]`,
//! `[[lte.enb]]`, `[[lte.ue]]`, …) is addressed by its `name` (`link.bottleneck.rate`), by its
//! index (`link.0.rate`) or by `*` (every element). An entry without a `name` answers to the
//! name the run gives it: a link to `"<a>-<b>"` from its `between`, a flow to `"flow<i>"` (see
//! `plan.rs`). Tables missing on the way are created; list elements never are.
//!
//! The text is edited in place (`toml_edit`), so the rest of the file, its comments and its line
//! numbers stay as written and errors can still point at lines.

use toml_edit::{DocumentMut, Item, Value};

use crate::error::ScenarioError;

/// The deepest key path `--set` accepts (the deepest real key has six parts, e.g.
/// `lte.ue.0.mobility.speed.mean_kmh`); deeper paths are refused before anything recurses.
const MAX_DEPTH: usize = 32;
/// The longest key path accepted (keys are echoed in messages).
const MAX_PATH_BYTES: usize = 512;

/// Applies `key.path=value` overrides to the TOML text. A value is TOML if it parses as one
/// (numbers, booleans, quoted strings, inline tables), else a bare string (`cc=bbr`).
pub fn apply_overrides(text: &str, overrides: &[String]) -> Result<String, ScenarioError> {
    if overrides.is_empty() {
        return Ok(text.to_string());
    }
    let mut doc = parse_doc(text)?;
    for o in overrides {
        let (path, raw) = o
            .split_once('=')
            .ok_or_else(|| ScenarioError::new("--set", format!("expected key.path=value, got {}", crate::error::quote_short(o))))?;
        let (path, raw) = (path.trim(), raw.trim());
        let value: Value = match format!("v = {raw}").parse::<DocumentMut>() {
            Ok(d) => d["v"].as_value().cloned().unwrap_or_else(|| Value::from(raw)),
            Err(_) => Value::from(raw),
        };
        for target in resolve_in(&doc, path)? {
            let parts: Vec<&str> = target.split('.').collect();
            set(doc.as_item_mut(), &parts, value.clone());
        }
    }
    Ok(doc.to_string())
}

/// The concrete paths (indices only) that `path` sets in the scenario `text`: `flow.*.cc` →
/// `["flow.0.cc", "flow.1.cc"]`, `link.bottleneck.rate` → `["link.0.rate"]`.
pub fn resolve_path(text: &str, path: &str) -> Result<Vec<String>, ScenarioError> {
    resolve_in(&parse_doc(text)?, path)
}

fn parse_doc(text: &str) -> Result<DocumentMut, ScenarioError> {
    text.parse().map_err(|e: toml_edit::TomlError| {
        ScenarioError::new("", format!("invalid TOML: {}", e.message())).at_line(e.span().map(|s| crate::config::line_of_offset(text, s.start)))
    })
}

/// The name a list element answers to: its `name`, else the default the run gives it.
fn element_name(list: &str, i: usize, t: &toml_edit::Table) -> Option<String> {
    if let Some(n) = t.get("name").and_then(|v| v.as_str()) {
        return Some(n.to_string());
    }
    match list {
        "link" => {
            let b = t.get("between")?.as_array()?;
            Some(format!("{}-{}", b.get(0)?.as_str()?, b.get(1)?.as_str()?))
        }
        "flow" => Some(format!("flow{i}")),
        _ => None,
    }
}

/// What the walk of [`resolve_in`] stands on.
enum Node<'a> {
    List(&'a toml_edit::ArrayOfTables),
    Table(&'a dyn toml_edit::TableLike),
    Value(&'a Value),
}

fn node(item: &Item) -> Node<'_> {
    if let Some(l) = item.as_array_of_tables() {
        Node::List(l)
    } else if let Some(t) = item.as_table_like() {
        Node::Table(t)
    } else {
        Node::Value(item.as_value().expect("an item is a table, a list of tables or a value"))
    }
}

fn is_index(p: &str) -> bool {
    p == "*" || p.bytes().all(|b| b.is_ascii_digit())
}

fn resolve_in(doc: &DocumentMut, path: &str) -> Result<Vec<String>, ScenarioError> {
    let parts: Vec<&str> = path.split('.').collect();
    if parts.len() > MAX_DEPTH || path.len() > MAX_PATH_BYTES {
        let shown: String = path.chars().take(40).collect();
        return Err(ScenarioError::new(
            "--set",
            format!("expected a key path of at most {MAX_DEPTH} keys and {MAX_PATH_BYTES} bytes, got one of {} keys and {} bytes starting {shown:?}", parts.len(), path.len()),
        ));
    }
    let e = |msg: String| ScenarioError::new(path, msg);
    if parts.iter().any(|p| p.is_empty()) {
        return Err(e("expected a dotted path such as \"link.bottleneck.rate\" or \"flow.0.cc\"".into()));
    }
    let mut out = Vec::new();
    // (node, index into parts, concrete path so far); depth first, so results keep list order
    let mut stack: Vec<(Node<'_>, usize, Vec<String>)> = vec![(Node::Table(doc.as_table()), 0, Vec::new())];
    while let Some((at, i, done)) = stack.pop() {
        if i == parts.len() {
            out.push(done.join("."));
            continue;
        }
        let p = parts[i];
        let here = if i == 0 { "the scenario".to_string() } else { parts[..i].join(".") };
        match at {
            Node::List(list) => {
                if i == parts.len() - 1 {
                    return Err(e(format!("names a whole [[{here}]] entry; name a key inside it (e.g. \"{path}.rate\")")));
                }
                let n = list.len();
                let list_key = parts[i - 1];
                let idx: Vec<usize> = if p == "*" {
                    (0..n).collect()
                } else if is_index(p) {
                    match p.parse::<usize>() {
                        Ok(k) if k < n => vec![k],
                        _ => return Err(e(format!("index {p} is out of range: there are {n} [[{here}]] entries (0..{})", n.saturating_sub(1)))),
                    }
                } else {
                    let found: Vec<usize> = (0..n).filter(|&k| element_name(list_key, k, list.get(k).expect("in range")).as_deref() == Some(p)).collect();
                    if found.is_empty() {
                        let names: Vec<String> = list.iter().enumerate().filter_map(|(k, t)| element_name(list_key, k, t)).collect();
                        let have = if names.is_empty() { "none has a name".to_string() } else { names.join(", ") };
                        return Err(e(format!("no [[{here}]] named '{p}' (expected a name, an index 0..{} or *; names: {have})", n.saturating_sub(1))));
                    }
                    if found.len() > 1 {
                        return Err(e(format!("{} [[{here}]] entries are named '{p}'; use an index", found.len())));
                    }
                    found
                };
                for k in idx.into_iter().rev() {
                    let mut d = done.clone();
                    d.push(k.to_string());
                    stack.push((Node::Table(list.get(k).expect("in range")), i + 1, d));
                }
            }
            Node::Table(t) => {
                if is_index(p) {
                    return Err(e(format!("{here} is a table, not a list of tables; {p:?} cannot index it")));
                }
                let mut d = done;
                let Some(child) = t.get(p) else {
                    // keys that are not there yet are created (the validation judges them);
                    // list elements below them cannot exist
                    if let Some(bad) = parts[i..].iter().find(|q| is_index(q)) {
                        return Err(e(format!("the scenario has no {} to index with {bad:?}", parts[..=i].join("."))));
                    }
                    d.extend(parts[i..].iter().map(|s| s.to_string()));
                    out.push(d.join("."));
                    continue;
                };
                if child.as_array().is_some() && i + 1 < parts.len() {
                    return Err(e(format!("{} is a list of values, not a list of tables; set it whole", parts[..=i].join("."))));
                }
                d.push(p.to_string());
                stack.push((node(child), i + 1, d));
            }
            Node::Value(v) => {
                return Err(e(format!("{here} is a value ({}), not a table", v.to_string().trim())));
            }
        }
    }
    Ok(out)
}

/// Sets the concrete `parts` (keys and indices) under `item` to `value`, creating tables.
fn set(item: &mut Item, parts: &[&str], value: Value) {
    let (head, rest) = parts.split_first().expect("non-empty path");
    if let Some(list) = item.as_array_of_tables_mut() {
        let k: usize = head.parse().expect("resolved index");
        let t = list.get_mut(k).expect("resolved index");
        let mut it = Item::Table(std::mem::take(t));
        set(&mut it, rest, value);
        *t = it.into_table().unwrap_or_default();
        return;
    }
    let table = item.as_table_like_mut().expect("resolved table");
    if rest.is_empty() {
        table.insert(head, Item::Value(value));
        return;
    }
    if table.get(head).is_none() {
        table.insert(head, Item::Table(toml_edit::Table::new()));
    }
    set(table.get_mut(head).expect("inserted"), rest, value);
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"duration = "10s"

[[link]]
name = "bottleneck"
between = ["left", "right"]
rate = "10Mbps"
delay = "20ms"

[[link]]
between = ["s", "left"] # no name: answers to "s-left"
delay = "1ms"

[[flow]]
name = "cubic"
app = "bulk"
from = "s"
to = "right"

[[flow]]
app = "bulk"
from = "s"
to = "right"

[lte]
[[lte.enb]]
name = "enb"

[[lte.ue]]
name = "ue"
count = 4
"#;

    fn set1(o: &str) -> Result<toml::Value, ScenarioError> {
        apply_overrides(TEXT, &[o.to_string()]).map(|t| toml::from_str(&t).unwrap())
    }

    #[test]
    fn list_entries_by_name_index_default_name_and_star() {
        let v = set1("link.bottleneck.rate=20Mbps").unwrap();
        assert_eq!(v["link"][0]["rate"].as_str(), Some("20Mbps"));
        let v = set1("link.s-left.rate=1Gbps").unwrap();
        assert_eq!(v["link"][1]["rate"].as_str(), Some("1Gbps"));
        let v = set1("flow.cubic.cc=bbr").unwrap();
        assert_eq!(v["flow"][0]["cc"].as_str(), Some("bbr"));
        let v = set1("flow.flow1.cc=vegas").unwrap();
        assert_eq!(v["flow"][1]["cc"].as_str(), Some("vegas"));
        let v = set1("lte.ue.ue.count=20").unwrap();
        assert_eq!(v["lte"]["ue"][0]["count"].as_integer(), Some(20));
        let v = set1("flow.*.cc={ name = \"cubic\", beta = 0.5 }").unwrap();
        for f in v["flow"].as_array().unwrap() {
            assert_eq!(f["cc"]["beta"].as_float(), Some(0.5));
        }
        assert_eq!(resolve_path(TEXT, "flow.*.cc").unwrap(), ["flow.0.cc", "flow.1.cc"]);
        assert_eq!(resolve_path(TEXT, "link.bottleneck.queue").unwrap(), ["link.0.queue"]);
        assert_eq!(resolve_path(TEXT, "lte.rlc.mode").unwrap(), ["lte.rlc.mode"]);
    }

    #[test]
    fn edits_keep_comments_and_line_numbers() {
        let t = apply_overrides(TEXT, &["link.bottleneck.rate=20Mbps".into(), "lte.ue.ue.count=8".into()]).unwrap();
        assert!(t.contains("# no name: answers to \"s-left\""), "{t}");
        let line_of = |s: &str, what: &str| s[..s.find(what).unwrap()].matches('\n').count();
        assert_eq!(line_of(&t, "[[flow]]"), line_of(TEXT, "[[flow]]"), "{t}");
        assert_eq!(line_of(&t, "[[lte.ue]]"), line_of(TEXT, "[[lte.ue]]"), "{t}");
    }

    #[test]
    fn an_unknown_name_is_one_line_naming_the_path_the_name_and_the_names() {
        let e = set1("link.bottlneck.rate=20Mbps").unwrap_err();
        assert_eq!(e.key, "link.bottlneck.rate");
        assert!(e.message.contains("'bottlneck'") && e.message.contains("bottleneck, s-left"), "{e}");
        assert!(!e.to_string().contains('\n'), "{e}");
    }

    #[test]
    fn bad_paths_say_what_is_wrong() {
        for (o, needle) in [
            ("link.5.rate=1Mbps", "out of range"),
            ("link.bottleneck=1", "whole [[link]] entry"),
            ("duration.x=1", "is a value"),
            ("lte.3.x=1", "not a list of tables"),
            ("link.0.between.0=x", "list of values"),
            ("nope.0.x=1", "no nope to index"),
            ("link..rate=1", "dotted path"),
            ("rate", "key.path=value"),
        ] {
            let e = set1(o).unwrap_err();
            assert!(e.to_string().contains(needle), "{o}: {e}");
        }
        let twice = TEXT.replace("name = \"cubic\"", "name = \"flow1\"");
        let e = apply_overrides(&twice, &["flow.flow1.cc=bbr".into()]).unwrap_err();
        assert!(e.message.contains("use an index"), "{e}");
    }
}
