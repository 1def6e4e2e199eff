//! Small readers of JSON values shared by settings and package manifests.

use serde_json::Value;

/// The string items of a JSON array (other items skipped); `None` when `value` is absent or not an
/// array.
pub fn string_items(value: Option<&Value>) -> Option<Vec<String>> {
    value.and_then(Value::as_array).map(|items| {
        items
            .iter()
            .filter_map(|item| item.as_str().map(str::to_owned))
            .collect()
    })
}
