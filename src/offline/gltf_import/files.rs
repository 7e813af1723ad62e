//! Files and URIs: the bytes of each buffer (the GLB's binary chunk, a `data:` URI or an external
//! file), where an external file may be read from, and reads that stop at [`LoadOptions`]' limits.

use super::{ExternalFiles, LoadOptions};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Where external file `uri` (percent-decoded: `rel`) is, under `options.external`; `Err` says why
/// it may not be read.
fn external_path(rel: &str, base: Option<&Path>, external: ExternalFiles) -> std::result::Result<PathBuf, String> {
    use std::path::Component;
    if rel.contains("://") {
        return Err("URLs are not read".into());
    }
    let path = Path::new(rel);
    // An empty folder (the parent of a bare file name) is the current one.
    let base = base.map(|d| if d.as_os_str().is_empty() { Path::new(".") } else { d });
    match external {
        ExternalFiles::Never => Err("external files are not read (ExternalFiles::Never)".into()),
        ExternalFiles::Anywhere => match base {
            Some(dir) => Ok(dir.join(path)),
            None if path.is_absolute() => Ok(path.to_path_buf()),
            None => Err("there is no folder to read it from (no base given)".into()),
        },
        ExternalFiles::InFolder => {
            let Some(dir) = base else {
                return Err("there is no folder to read it from (no base given)".into());
            };
            if path
                .components()
                .any(|c| matches!(c, Component::RootDir | Component::Prefix(_)))
            {
                return Err("an absolute path: only files inside the glTF file's folder are read \
                            (ExternalFiles::InFolder)"
                    .into());
            }
            // Both resolved (`..` and symbolic links followed), then compared.
            let dir = dir.canonicalize().map_err(|e| format!("its folder: {e}"))?;
            let full = dir.join(path).canonicalize().map_err(|e| e.to_string())?;
            if !full.starts_with(&dir) {
                return Err("it leads outside the glTF file's folder (ExternalFiles::InFolder)".into());
            }
            Ok(full)
        }
    }
}

/// The first `len` bytes of `path`, a regular file (fewer if it is shorter; not a pipe or a
/// device, which could block or never end).
fn read_prefix(path: &Path, len: u64) -> std::result::Result<Vec<u8>, String> {
    use std::io::Read;
    if !std::fs::metadata(path).map_err(|e| e.to_string())?.is_file() {
        return Err("not a regular file".into());
    }
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut data = Vec::new();
    f.take(len).read_to_end(&mut data).map_err(|e| e.to_string())?;
    Ok(data)
}

/// Reads at most `limit` bytes of `path`, a regular file (not a pipe or a device, which could
/// block or never end); more is an error.
pub(super) fn read_limited(path: &Path, limit: u64) -> std::result::Result<Vec<u8>, String> {
    let data = read_prefix(path, limit.saturating_add(1))?;
    if data.len() as u64 > limit {
        return Err(format!(
            "larger than the limit of {limit} bytes (LoadOptions::max_file_bytes)"
        ));
    }
    Ok(data)
}

/// The bytes of every buffer of `gltf`, in order, each cut to its `byteLength`.
pub(super) fn load_buffers(
    gltf: &gltf::Gltf,
    file: &str,
    base: Option<&Path>,
    options: &LoadOptions,
) -> Result<Vec<Vec<u8>>> {
    let err = |what: String| Error::Asset {
        file: file.into(),
        what,
    };
    let mut out = Vec::new();
    // All buffers together stay within the file limit (a buffer named many times counts each time).
    let mut budget = options.max_file_bytes;
    for b in gltf.buffers() {
        let declared = b.length() as u64;
        if declared > budget {
            return Err(err(format!(
                "buffer {}: byteLength {declared} takes the buffers past the limit of {} bytes \
                 (LoadOptions::max_file_bytes)",
                b.index(),
                options.max_file_bytes
            )));
        }
        budget -= declared;
        let data: Vec<u8> = match b.source() {
            // Only the first buffer may be the GLB's binary chunk (glTF 2.0, GLB-stored buffer).
            gltf::buffer::Source::Bin if b.index() != 0 => {
                return Err(err(format!(
                    "buffer {} has no uri; only buffer 0 may be the GLB's binary chunk",
                    b.index()
                )));
            }
            gltf::buffer::Source::Bin => gltf
                .blob
                .clone()
                .ok_or_else(|| err(format!("buffer {}: no binary chunk", b.index())))?,
            gltf::buffer::Source::Uri(uri) => {
                if let Some(rest) = uri.strip_prefix("data:") {
                    let (_, payload) = rest
                        .split_once(";base64,")
                        .ok_or_else(|| err(format!("buffer {}: data URI is not base64", b.index())))?;
                    if payload.len() / 4 * 3 > options.max_data_uri_bytes {
                        return Err(err(format!(
                            "buffer {}: its data URI holds about {} bytes, more than the limit of {} \
                             (LoadOptions::max_data_uri_bytes)",
                            b.index(),
                            payload.len() / 4 * 3,
                            options.max_data_uri_bytes
                        )));
                    }
                    use base64::Engine as _;
                    base64::engine::general_purpose::STANDARD
                        .decode(payload)
                        .map_err(|e| err(format!("buffer {}: bad base64: {e}", b.index())))?
                } else {
                    let rel = percent_decode(uri);
                    let cannot = |why: String| err(format!("buffer {}: cannot read '{uri}': {why}", b.index()));
                    let p = external_path(&rel, base, options.external).map_err(cannot)?;
                    read_prefix(&p, declared).map_err(cannot)?
                }
            }
        };
        if data.len() < b.length() {
            return Err(err(format!(
                "buffer {}: byteLength is {} but only {} bytes are there",
                b.index(),
                b.length(),
                data.len()
            )));
        }
        let mut data = data;
        data.truncate(b.length());
        out.push(data);
    }
    Ok(out)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b.bin"), "a b.bin");
        assert_eq!(percent_decode("bad%2"), "bad%2");
        assert_eq!(percent_decode("x%"), "x%");
    }
}
