//! A write transaction: a working copy of the tables and the changes that made it.

use crate::record::Change;
use crate::{apply, Error, Tables};
use std::collections::BTreeMap;

/// A write transaction from [`crate::Db::begin`]; [`crate::Db::commit`] makes it durable,
/// dropping it rolls back. Each change is checked against the working copy as it is made.
pub struct Tx {
    tables: Tables,
    changes: Vec<Change>,
}

impl Tx {
    pub(crate) fn new(tables: Tables) -> Tx {
        Tx {
            tables,
            changes: Vec::new(),
        }
    }

    pub(crate) fn into_parts(self) -> (Tables, Vec<Change>) {
        (self.tables, self.changes)
    }

    fn change(&mut self, c: Change) -> Result<(), Error> {
        apply(&mut self.tables, &c)?;
        self.changes.push(c);
        Ok(())
    }

    pub fn create_table(&mut self, table: &[u8]) -> Result<(), Error> {
        self.change(Change::CreateTable(table.to_vec()))
    }

    pub fn drop_table(&mut self, table: &[u8]) -> Result<(), Error> {
        self.change(Change::DropTable(table.to_vec()))
    }

    pub fn put(&mut self, table: &[u8], key: &[u8], value: &[u8]) -> Result<(), Error> {
        self.change(Change::Put {
            table: table.to_vec(),
            key: key.to_vec(),
            value: value.to_vec(),
        })
    }

    pub fn delete(&mut self, table: &[u8], key: &[u8]) -> Result<(), Error> {
        self.change(Change::Delete {
            table: table.to_vec(),
            key: key.to_vec(),
        })
    }

    /// A table as this transaction sees it.
    pub fn table(&self, table: &[u8]) -> Option<&BTreeMap<Vec<u8>, Vec<u8>>> {
        self.tables.get(table)
    }
}
