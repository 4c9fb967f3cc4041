//! `stringdb export`: snapshot files to one Parquet file, for the engines
//! that already read Parquet (DuckDB, Spark, pandas, Polars).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use crate::{load_and_merge, output, progress, Failure};

/// `id` is an unsigned 64-bit integer (stored, as Parquet stores every
/// UINT64, in an INT64 column with the unsigned annotation); `name` is a
/// UTF-8 string.
const SCHEMA: &str = "
message dictionary {
    required int64 id (INTEGER(64, false));
    required binary name (STRING);
}";

/// Rows per row group: bounded memory for the column buffers, and few
/// enough groups that readers' per-group overhead stays small.
const ROWS_PER_GROUP: usize = 1 << 20;

pub(crate) fn export(path: &Path, inputs: &[PathBuf], lossy: bool) -> Result<(), Failure> {
    output::check_writable(path)?;
    let snapshot = load_and_merge(inputs)?;
    // Every name is checked before the output is created: a bad name leaves
    // no file at all.
    if !lossy {
        if let Some((id, _)) = snapshot
            .iter()
            .find(|(_, name)| core::str::from_utf8(name).is_err())
        {
            return Err(Failure(format!(
                "id {id}: the name is not UTF-8 (pass --lossy to replace its invalid bytes with U+FFFD)"
            )));
        }
    }
    let fail = |e: parquet::errors::ParquetError| Failure::from((path, e));
    let schema = Arc::new(parse_message_type(SCHEMA).map_err(fail)?);
    let properties = Arc::new(
        WriterProperties::builder()
            // Names are distinct: a dictionary would only cost.
            .set_dictionary_enabled(false)
            .build(),
    );
    let bar = progress(snapshot.len() as u64, "writing");
    output::write_atomically(path, |out| {
        let mut writer = SerializedFileWriter::new(out, schema, properties).map_err(fail)?;
        let entries: Vec<(u64, &[u8])> = snapshot.iter().collect();
        for group in entries.chunks(ROWS_PER_GROUP) {
            // Bit for bit: the unsigned annotation reads them back as u64.
            let ids: Vec<i64> = group.iter().map(|&(id, _)| id as i64).collect();
            let names: Vec<ByteArray> = group
                .iter()
                .map(|&(_, name)| match core::str::from_utf8(name) {
                    Ok(_) => ByteArray::from(name.to_vec()),
                    Err(_) => {
                        ByteArray::from(String::from_utf8_lossy(name).into_owned().into_bytes())
                    }
                })
                .collect();
            let mut row_group = writer.next_row_group().map_err(fail)?;
            let mut column = row_group.next_column().map_err(fail)?.ok_or_else(missing)?;
            column
                .typed::<Int64Type>()
                .write_batch(&ids, None, None)
                .map_err(fail)?;
            column.close().map_err(fail)?;
            let mut column = row_group.next_column().map_err(fail)?.ok_or_else(missing)?;
            column
                .typed::<ByteArrayType>()
                .write_batch(&names, None, None)
                .map_err(fail)?;
            column.close().map_err(fail)?;
            row_group.close().map_err(fail)?;
            bar.inc(group.len() as u64);
        }
        writer.close().map_err(fail)?;
        Ok(())
    })?;
    bar.finish_and_clear();
    Ok(())
}

fn missing() -> Failure {
    Failure("internal error: the Parquet schema has fewer columns than written".into())
}
