//! Jain's fairness index (R. Jain, D. Chiu, W. Hawe, "A Quantitative Measure of Fairness and
//! Discrimination for Resource Allocation in Shared Computer Systems", DEC-TR-301, 1984, §3):
//! for allocations x₁..xₙ, J = (Σxᵢ)² / (n Σxᵢ²), from 1/n (one flow takes everything) to 1
//! (equal shares).
//!
//! The summary computes it over the flows' `goodput_bps` for each flow group: the flows of one
//! app kind (`bulk`, `iperf`, `udp`, `web`, `video`; ping flows carry no payload and are left
//! out), and, with `[lte]`, the flows of the UEs served by one cell at the end of the run (a
//! flow's UE is its `to`, else its `from`, as in the sweep's results table). Each flow gets its
//! groups' indices (`jain_index`, `jain_index_cell`), so they reach sweep results as columns;
//! the run gets `jain_index` over all flows and the `fairness` table of every group.

use std::collections::BTreeMap;

use serde_json::{json, Value};

/// Jain's index of `xs`; `None` for no flows or when every share is zero.
pub fn jain(xs: &[f64]) -> Option<f64> {
    let n = xs.len() as f64;
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    (n > 0.0 && sq > 0.0).then(|| sum * sum / (n * sq))
}

fn num(x: Option<f64>) -> Value {
    x.filter(|v| v.is_finite()).map_or(Value::Null, |v| json!(v))
}

/// Adds the indices to `summary` (its `flows` and, with LTE, `lte.ues` already filled in).
pub(crate) fn annotate(summary: &mut Value) {
    let cell_of: BTreeMap<String, String> = summary["lte"]["ues"]
        .as_array()
        .map(|ues| ues.iter().filter_map(|u| Some((u["name"].as_str()?.to_string(), u["cell"].as_str()?.to_string()))).collect())
        .unwrap_or_default();
    let Some(flows) = summary["flows"].as_array() else { return };
    let mut by_app: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut by_cell: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut all = Vec::new();
    let mut goodput = Vec::new();
    for (i, f) in flows.iter().enumerate() {
        goodput.push(f["goodput_bps"].as_f64().unwrap_or(0.0));
        let app = f["app"].as_str().unwrap_or("").to_string();
        if app == "ping" {
            continue;
        }
        all.push(i);
        by_app.entry(app).or_default().push(i);
        let ue = [&f["to"], &f["from"]].into_iter().find_map(|n| cell_of.get(n.as_str()?));
        if let Some(cell) = ue {
            by_cell.entry(cell.clone()).or_default().push(i);
        }
    }
    let index = |members: &[usize]| jain(&members.iter().map(|&i| goodput[i]).collect::<Vec<_>>());
    let app_j: BTreeMap<&String, Option<f64>> = by_app.iter().map(|(k, m)| (k, index(m))).collect();
    let cell_j: BTreeMap<&String, Option<f64>> = by_cell.iter().map(|(k, m)| (k, index(m))).collect();
    let mut per_flow: Vec<(Option<f64>, Option<Option<f64>>)> = vec![(None, None); flows.len()];
    for (k, m) in &by_app {
        for &i in m {
            per_flow[i].0 = app_j[k];
        }
    }
    for (k, m) in &by_cell {
        for &i in m {
            per_flow[i].1 = Some(cell_j[k]);
        }
    }
    let groups: Vec<Value> = by_app
        .iter()
        .map(|(k, m)| json!({ "group": format!("app:{k}"), "flows": m.len(), "jain_index": num(app_j[k]) }))
        .chain(by_cell.iter().map(|(k, m)| json!({ "group": format!("cell:{k}"), "flows": m.len(), "jain_index": num(cell_j[k]) })))
        .collect();
    let total = index(&all);
    if let Some(flows) = summary["flows"].as_array_mut() {
        for (f, (a, c)) in flows.iter_mut().zip(per_flow) {
            if let Some(m) = f.as_object_mut() {
                m.insert("jain_index".into(), num(a));
                if let Some(c) = c {
                    m.insert("jain_index_cell".into(), num(c));
                }
            }
        }
    }
    summary["jain_index"] = num(total);
    summary["fairness"] = Value::Array(groups);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_matches_the_paper_s_definition() {
        // equal shares: 1; one of n takes all: 1/n; (1, 2, 3): 36 / (3 × 14)
        assert_eq!(jain(&[5.0, 5.0, 5.0]), Some(1.0));
        assert_eq!(jain(&[7.0, 0.0, 0.0, 0.0]), Some(0.25));
        assert!((jain(&[1.0, 2.0, 3.0]).unwrap() - 36.0 / 42.0).abs() < 1e-12);
        assert!((jain(&[1.0, 2.0]).unwrap() - 0.9).abs() < 1e-12);
        // Jain 1984 §3: scale independent
        assert_eq!(jain(&[1.0, 3.0]), jain(&[1000.0, 3000.0]));
        assert_eq!(jain(&[]), None);
        assert_eq!(jain(&[0.0, 0.0]), None);
    }

    #[test]
    fn groups_by_app_and_cell() {
        let mut s = json!({
            "flows": [
                { "name": "a", "app": "bulk", "from": "srv", "to": "ue1", "goodput_bps": 1.0 },
                { "name": "b", "app": "bulk", "from": "srv", "to": "ue2", "goodput_bps": 3.0 },
                { "name": "c", "app": "web", "from": "ue3", "to": "srv", "goodput_bps": 2.0 },
                { "name": "p", "app": "ping", "from": "ue3", "to": "srv", "goodput_bps": 0.0 },
            ],
            "lte": { "ues": [ { "name": "ue1", "cell": "A" }, { "name": "ue2", "cell": "B" }, { "name": "ue3", "cell": "A" } ] }
        });
        annotate(&mut s);
        let f = &s["flows"];
        let j13 = 16.0 / (2.0 * 10.0); // (1 + 3)² / (2 (1 + 9))
        assert!((f[0]["jain_index"].as_f64().unwrap() - j13).abs() < 1e-12);
        assert_eq!(f[2]["jain_index"], json!(1.0));
        // cell A: flows a (1) and c (2): 9 / (2 × 5)
        assert!((f[0]["jain_index_cell"].as_f64().unwrap() - 0.9).abs() < 1e-12);
        assert_eq!(f[1]["jain_index_cell"], json!(1.0));
        assert_eq!(f[3]["jain_index"], Value::Null, "ping is left out");
        // all but ping: (1, 3, 2): 36 / (3 × 14)
        assert!((s["jain_index"].as_f64().unwrap() - 36.0 / 42.0).abs() < 1e-12);
        assert_eq!(s["fairness"].as_array().unwrap().len(), 4);
    }
}
