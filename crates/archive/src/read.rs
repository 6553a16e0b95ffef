//! Reading kept states back: a version's bytes (each chunk checked), a
//! restore, and the whole archive's check and figures.

use crate::{path_text, Archive, ArchiveError};
use std::path::Path;

/// What [`Archive::verify`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct VerifyReport {
    /// Chunks checked.
    pub chunks: u64,
    /// Versions checked.
    pub versions: u64,
    /// Every problem found (empty: the archive is whole).
    pub problems: Vec<String>,
}

/// The archive's figures.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ArchiveStats {
    /// Files kept.
    pub sources: u64,
    /// Of them, gone from disk.
    pub gone: u64,
    /// States kept.
    pub versions: u64,
    /// Distinct chunks stored.
    pub chunks: u64,
    /// Bytes of every latest state, as the files were.
    pub latest_bytes: u64,
    /// Bytes of every state kept, as the files were.
    pub all_bytes: u64,
    /// Bytes of the chunks, compressed.
    pub stored_bytes: u64,
    /// Bytes of the archive's files on disk (database and log).
    pub disk_bytes: u64,
}

impl Archive {
    /// The bytes of version `id`, each chunk decompressed and checked
    /// against its hash.
    pub fn read_version(&self, id: i64) -> Result<Vec<u8>, ArchiveError> {
        let db = &self.db;
        let damaged = |what: String| ArchiveError::Damaged {
            path: db.to_path_buf(),
            what,
        };
        let (size, digest): (i64, Vec<u8>) = self.sql(self.conn.query_row(
            "SELECT size, digest FROM versions WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        ))?;
        let mut out = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        let mut st = self.sql(self.conn.prepare_cached(
            "SELECT p.seq, p.offset, p.size, c.hash, c.z FROM parts p
             LEFT JOIN chunks c ON c.id = p.chunk WHERE p.version = ?1 ORDER BY p.seq",
        ))?;
        let mut rows = self.sql(st.query([id]))?;
        let mut tree = blake3::Hasher::new();
        while let Some(r) = self.sql(rows.next())? {
            let seq: i64 = self.sql(r.get(0))?;
            let offset: i64 = self.sql(r.get(1))?;
            let len: i64 = self.sql(r.get(2))?;
            let hash: Option<Vec<u8>> = self.sql(r.get(3))?;
            let z: Option<Vec<u8>> = self.sql(r.get(4))?;
            let (Some(hash), Some(z)) = (hash, z) else {
                return Err(damaged(format!(
                    "version {id} part {seq}: its chunk is missing"
                )));
            };
            if offset != out.len() as i64 {
                return Err(damaged(format!(
                    "version {id} part {seq}: starts at {offset}, expected {}",
                    out.len()
                )));
            }
            let data = zstd::bulk::decompress(&z, len.max(0) as usize).map_err(|e| {
                damaged(format!("version {id} part {seq}: does not decompress: {e}"))
            })?;
            if data.len() as i64 != len
                || blake3::hash(&data).as_bytes().as_slice() != hash.as_slice()
            {
                return Err(damaged(format!(
                    "version {id} part {seq}: its bytes do not match their hash"
                )));
            }
            tree.update(&hash);
            out.extend_from_slice(&data);
        }
        if out.len() as i64 != size || tree.finalize().as_bytes().as_slice() != digest.as_slice() {
            return Err(damaged(format!(
                "version {id}: its parts make {} bytes that do not match the version ({size} bytes)",
                out.len()
            )));
        }
        Ok(out)
    }

    /// The version holding state `number` (from 1; the latest when
    /// `None`) of `path`, and the state's size.
    pub fn state(&self, path: &Path, number: Option<u32>) -> Result<(i64, u64), ArchiveError> {
        let versions = self.versions(path)?;
        let v = match number {
            None => versions.last(),
            Some(n) => versions.iter().find(|v| v.number == n),
        };
        v.map(|v| (v.id, v.stat.size))
            .ok_or_else(|| ArchiveError::NotKept {
                path: path.to_path_buf(),
                version: number,
            })
    }

    /// The bytes of state `number` of `path` (the latest when `None`).
    pub fn read(&self, path: &Path, number: Option<u32>) -> Result<Vec<u8>, ArchiveError> {
        let (id, size) = self.state(path, number)?;
        let mut bytes = self.read_version(id)?;
        bytes.truncate(usize::try_from(size).unwrap_or(usize::MAX));
        Ok(bytes)
    }

    /// Writes version `number` of `path` (the latest when `None`) to `to`
    /// (the path itself when `None`), never over an existing file unless
    /// `force`; reads the written file back and checks it. Returns where
    /// it wrote and how many bytes.
    pub fn restore(
        &self,
        path: &Path,
        number: Option<u32>,
        to: Option<&Path>,
        force: bool,
    ) -> Result<(std::path::PathBuf, u64), ArchiveError> {
        let bytes = self.read(path, number)?;
        let dest = to.unwrap_or(path);
        let store = |e| ArchiveError::Store {
            path: dest.to_path_buf(),
            source: Box::new(e),
        };
        let existing = if force {
            agentlog_store::snapshot::Existing::Replace
        } else {
            agentlog_store::snapshot::Existing::Refuse
        };
        if !force && std::fs::symlink_metadata(dest).is_ok() {
            return Err(ArchiveError::Exists {
                path: dest.to_path_buf(),
            });
        }
        agentlog_store::snapshot::write_file_with(dest, existing, |w| {
            w.write_all(&bytes)
                .map_err(|e| agentlog_store::StoreError::io(dest, "write", e))
        })
        .map_err(store)?;
        let back = std::fs::read(dest)
            .map_err(|e| ArchiveError::io(dest, "read back the restored file", e))?;
        if blake3::hash(&back) != blake3::hash(&bytes) {
            return Err(ArchiveError::Damaged {
                path: dest.to_path_buf(),
                what: "the restored file does not read back as written".into(),
            });
        }
        Ok((dest.to_path_buf(), bytes.len() as u64))
    }

    /// Checks the whole archive: SQLite's integrity check, every chunk
    /// decompressed and hashed, every version's parts contiguous and
    /// present.
    pub fn verify(&self) -> Result<VerifyReport, ArchiveError> {
        let mut report = VerifyReport::default();
        let integrity: Vec<String> = self.sql(
            self.conn
                .prepare("PRAGMA integrity_check")
                .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect()),
        )?;
        report.problems.extend(
            integrity
                .into_iter()
                .filter(|l| l != "ok")
                .map(|l| format!("database: {l}")),
        );
        let mut st = self.sql(
            self.conn
                .prepare("SELECT id, hash, size, z FROM chunks ORDER BY id"),
        )?;
        let mut rows = self.sql(st.query([]))?;
        while let Some(r) = self.sql(rows.next())? {
            report.chunks += 1;
            let id: i64 = self.sql(r.get(0))?;
            let hash: Vec<u8> = self.sql(r.get(1))?;
            let size: i64 = self.sql(r.get(2))?;
            let z: Vec<u8> = self.sql(r.get(3))?;
            match zstd::bulk::decompress(&z, size.max(0) as usize) {
                Err(e) => report
                    .problems
                    .push(format!("chunk {id}: does not decompress: {e}")),
                Ok(d)
                    if d.len() as i64 != size
                        || blake3::hash(&d).as_bytes().as_slice() != hash.as_slice() =>
                {
                    report
                        .problems
                        .push(format!("chunk {id}: its bytes do not match their hash"))
                }
                Ok(_) => {}
            }
        }
        let versions: Vec<(i64, i64, String)> = self.sql(
            self.conn
                .prepare(
                    "SELECT v.id, v.size, s.path FROM versions v JOIN sources s ON s.id = v.source",
                )
                .and_then(|mut st| {
                    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                        .collect()
                }),
        )?;
        for (id, size, path) in versions {
            report.versions += 1;
            let parts: Vec<(i64, i64, bool)> = self.sql(
                self.conn
                    .prepare_cached(
                        "SELECT p.offset, p.size, c.id IS NOT NULL FROM parts p
                         LEFT JOIN chunks c ON c.id = p.chunk WHERE p.version = ?1 ORDER BY p.seq",
                    )
                    .and_then(|mut st| {
                        st.query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                            .collect()
                    }),
            )?;
            let mut at = 0i64;
            for (offset, len, present) in parts {
                if !present {
                    report
                        .problems
                        .push(format!("{path}: version {id} uses a chunk that is missing"));
                }
                if offset != at {
                    report.problems.push(format!(
                        "{path}: version {id} has a gap or overlap at byte {at}"
                    ));
                }
                at = offset + len;
            }
            if at != size {
                report.problems.push(format!(
                    "{path}: version {id}'s parts make {at} bytes, not {size}"
                ));
            }
        }
        Ok(report)
    }

    /// The archive's figures.
    pub fn stats(&self) -> Result<ArchiveStats, ArchiveError> {
        let q = |sql: &str| -> Result<i64, ArchiveError> {
            self.sql(
                self.conn
                    .query_row(sql, [], |r| r.get::<_, Option<i64>>(0))
                    .map(|v| v.unwrap_or(0)),
            )
        };
        let disk = [self.db.clone(), self.db.with_extension("sqlite-wal")]
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum();
        Ok(ArchiveStats {
            sources: q("SELECT count(*) FROM sources")? as u64,
            gone: q("SELECT count(*) FROM sources WHERE gone_ns IS NOT NULL")? as u64,
            versions: q("SELECT count(*) FROM versions")? as u64,
            chunks: q("SELECT count(*) FROM chunks")? as u64,
            latest_bytes: q(
                "SELECT sum(v.size) FROM versions v WHERE v.id = (SELECT max(id) FROM versions WHERE source = v.source)",
            )? as u64,
            all_bytes: q("SELECT sum(size) FROM versions")? as u64,
            stored_bytes: q("SELECT sum(length(z)) FROM chunks")? as u64,
            disk_bytes: disk,
        })
    }

    /// True when the archive holds `path`.
    pub fn holds(&self, path: &Path) -> Result<bool, ArchiveError> {
        let n: i64 = self.sql(self.conn.query_row(
            "SELECT count(*) FROM sources WHERE path = ?1",
            [path_text(path)],
            |r| r.get(0),
        ))?;
        Ok(n > 0)
    }
}
