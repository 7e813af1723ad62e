//! Reading accessors: the accepted types of each kind, component types and normalization, byte
//! strides, sparse values, and bounds against the bytes really in the buffer views.

use super::Importer;
use crate::error::Result;
use glam::Vec3;
use gltf::accessor::{DataType, Dimensions};

/// Accepted (component type, normalized-or-not) pairs for one kind of accessor.
pub(super) struct Want {
    pub(super) what: String,
    pub(super) dims: Dimensions,
    pub(super) types: &'static [DataType],
}

pub(super) const FLOAT: &[DataType] = &[DataType::F32];
pub(super) const FLOAT_OR_NORM: &[DataType] = &[DataType::F32, DataType::U8, DataType::U16];
pub(super) const ROTATION_TYPES: &[DataType] =
    &[DataType::F32, DataType::I8, DataType::U8, DataType::I16, DataType::U16];
/// Morph-target weights of an animation: float, or normalized signed or unsigned bytes or
/// shorts (glTF 2.0, "Animations": the same types as rotations).
pub(super) const MORPH_WEIGHT_TYPES: &[DataType] = ROTATION_TYPES;
pub(super) const UINTS: &[DataType] = &[DataType::U8, DataType::U16, DataType::U32];
pub(super) const JOINT_TYPES: &[DataType] = &[DataType::U8, DataType::U16];

pub(super) fn dims_count(d: Dimensions) -> usize {
    match d {
        Dimensions::Scalar => 1,
        Dimensions::Vec2 => 2,
        Dimensions::Vec3 => 3,
        Dimensions::Vec4 => 4,
        Dimensions::Mat2 => 4,
        Dimensions::Mat3 => 9,
        Dimensions::Mat4 => 16,
    }
}

fn comp_size(t: DataType) -> usize {
    match t {
        DataType::I8 | DataType::U8 => 1,
        DataType::I16 | DataType::U16 => 2,
        DataType::U32 | DataType::F32 => 4,
    }
}

/// One component at `bytes[0..]` as f64; integers normalized to [0, 1] / [-1, 1] when `norm`.
fn read_comp(t: DataType, b: &[u8], norm: bool) -> Option<f64> {
    Some(match t {
        DataType::I8 => {
            let v = f64::from(*b.first()? as i8);
            if norm { (v / 127.0).max(-1.0) } else { v }
        }
        DataType::U8 => {
            let v = f64::from(*b.first()?);
            if norm { v / 255.0 } else { v }
        }
        DataType::I16 => {
            let v = f64::from(i16::from_le_bytes(b.get(0..2)?.try_into().ok()?));
            if norm { (v / 32767.0).max(-1.0) } else { v }
        }
        DataType::U16 => {
            let v = f64::from(u16::from_le_bytes(b.get(0..2)?.try_into().ok()?));
            if norm { v / 65535.0 } else { v }
        }
        DataType::U32 => f64::from(u32::from_le_bytes(b.get(0..4)?.try_into().ok()?)),
        DataType::F32 => f64::from(f32::from_le_bytes(b.get(0..4)?.try_into().ok()?)),
    })
}

impl Importer<'_> {
    /// The bytes of a buffer view, checked against its buffer.
    fn view_bytes(&self, view: &gltf::buffer::View<'_>, what: &str) -> Result<&[u8]> {
        let buf = self
            .buffers
            .get(view.buffer().index())
            .ok_or_else(|| self.err(format!("{what}: buffer {} missing", view.buffer().index())))?;
        let end = view.offset().checked_add(view.length());
        end.and_then(|end| buf.get(view.offset()..end)).ok_or_else(|| {
            self.err(format!(
                "{what}: buffer view {} (offset {}, length {}) exceeds buffer {} ({} bytes)",
                view.index(),
                view.offset(),
                view.length(),
                view.buffer().index(),
                buf.len()
            ))
        })
    }

    /// Reads `count` elements of `n` components each from a view, with full bounds checks.
    #[allow(clippy::too_many_arguments)]
    fn read_elements(
        &self,
        view: &gltf::buffer::View<'_>,
        offset: usize,
        count: usize,
        n: usize,
        t: DataType,
        norm: bool,
        what: &str,
    ) -> Result<Vec<f64>> {
        let bytes = self.view_bytes(view, what)?;
        let cs = comp_size(t);
        let elem = n * cs;
        let stride = view.stride().unwrap_or(elem);
        if stride < elem {
            return Err(self.err(format!(
                "{what}: byte stride {stride} is smaller than an element ({elem} bytes)"
            )));
        }
        let needed = count
            .checked_sub(1)
            .and_then(|c| c.checked_mul(stride))
            .and_then(|x| x.checked_add(elem))
            .and_then(|x| x.checked_add(offset));
        match needed {
            Some(end) if end <= bytes.len() => {}
            _ => {
                return Err(self.err(format!(
                    "{what}: {count} elements at offset {offset} with stride {stride} exceed buffer view {} ({} bytes)",
                    view.index(),
                    bytes.len()
                )));
            }
        }
        let mut out = Vec::with_capacity(count * n);
        for e in 0..count {
            let at = offset + e * stride;
            for c in 0..n {
                let v = bytes
                    .get(at + c * cs..)
                    .and_then(|b| read_comp(t, b, norm))
                    .ok_or_else(|| self.err(format!("{what}: element {e} out of bounds")))?;
                out.push(v);
            }
        }
        Ok(out)
    }

    /// Reads an accessor as flat components, checking its type against `want`. Integer
    /// components are normalized when the accessor says so or when `as_float` is set (glTF only
    /// allows normalized integers where floats are expected). Floats must be finite.
    pub(super) fn read(&self, acc: &gltf::Accessor<'_>, want: &Want, as_float: bool) -> Result<Vec<f64>> {
        let what = format!("accessor {} ({})", acc.index(), want.what);
        if acc.dimensions() != want.dims {
            return Err(self.err(format!(
                "{what}: type is {:?}, expected {:?}",
                acc.dimensions(),
                want.dims
            )));
        }
        let t = acc.data_type();
        if !want.types.contains(&t) {
            return Err(self.err(format!(
                "{what}: component type {t:?} is not allowed here (allowed: {:?})",
                want.types
            )));
        }
        let n = dims_count(acc.dimensions());
        if matches!(acc.dimensions(), Dimensions::Mat2 | Dimensions::Mat3) && comp_size(t) < 4 {
            return Err(self.err(format!("{what}: padded matrix types are not supported")));
        }
        let count = acc.count();
        if count == 0 {
            return Err(self.err(format!("{what}: count is 0")));
        }
        let values = count.saturating_mul(n);
        let left = self.accessor_values_left.get();
        if values > left {
            return Err(self.err(format!(
                "{what}: {count} elements of {n} values take the import past its limit of values read \
                 ({left} left; LoadOptions::max_accessor_values)"
            )));
        }
        self.accessor_values_left.set(left - values);
        let norm = t != DataType::F32 && (as_float || acc.normalized());
        let mut data = match acc.view() {
            Some(view) => self.read_elements(&view, acc.offset(), count, n, t, norm, &what)?,
            None => {
                if acc.sparse().is_none() {
                    return Err(self.err(format!("{what}: has neither a buffer view nor sparse data")));
                }
                vec![
                    0.0;
                    count
                        .checked_mul(n)
                        .ok_or_else(|| self.err(format!("{what}: count too large")))?
                ]
            }
        };
        if let Some(sparse) = acc.sparse() {
            let sc = sparse.count();
            if sc == 0 || sc > count {
                return Err(self.err(format!("{what}: sparse count {sc} not in 1..={count}")));
            }
            let idx = sparse.indices();
            let it = match idx.index_type() {
                gltf::accessor::sparse::IndexType::U8 => DataType::U8,
                gltf::accessor::sparse::IndexType::U16 => DataType::U16,
                gltf::accessor::sparse::IndexType::U32 => DataType::U32,
            };
            let indices = self.read_elements(
                &idx.view(),
                idx.offset(),
                sc,
                1,
                it,
                false,
                &format!("{what} sparse indices"),
            )?;
            let vals = sparse.values();
            let values = self.read_elements(
                &vals.view(),
                vals.offset(),
                sc,
                n,
                t,
                norm,
                &format!("{what} sparse values"),
            )?;
            for (k, &i) in indices.iter().enumerate() {
                let i = i as usize;
                if i >= count {
                    return Err(self.err(format!("{what}: sparse index {i} out of range (count {count})")));
                }
                data[i * n..(i + 1) * n].copy_from_slice(&values[k * n..(k + 1) * n]);
            }
        }
        if t == DataType::F32 && data.iter().any(|v| !v.is_finite()) {
            return Err(self.err(format!("{what}: contains a non-finite value")));
        }
        Ok(data)
    }

    /// Reads a VEC3 float accessor (or normalized integers) as vectors.
    pub(super) fn read_vec3(&self, acc: &gltf::Accessor<'_>, what: &str) -> Result<Vec<Vec3>> {
        let d = self.read(
            acc,
            &Want {
                what: what.into(),
                dims: Dimensions::Vec3,
                types: FLOAT,
            },
            true,
        )?;
        Ok(d.chunks_exact(3)
            .map(|c| Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Normalized integers as glTF 2.0's "Accessors" section decodes them: signed ones
    /// `max(c / 127, -1)` and `max(c / 32767, -1)`, so the most negative value is -1 too.
    #[test]
    fn normalized_integers_decode_as_gltf_says() {
        let i8s = |c: i8| read_comp(DataType::I8, &c.to_le_bytes(), true);
        assert_eq!(i8s(127), Some(1.0));
        assert_eq!(i8s(-127), Some(-1.0));
        assert_eq!(i8s(-128), Some(-1.0));
        assert_eq!(i8s(-64), Some(-64.0 / 127.0));
        let i16s = |c: i16| read_comp(DataType::I16, &c.to_le_bytes(), true);
        assert_eq!(i16s(i16::MIN), Some(-1.0));
        assert_eq!(i16s(16000), Some(16000.0 / 32767.0));
        assert_eq!(read_comp(DataType::U8, &[255], true), Some(1.0));
        assert_eq!(read_comp(DataType::U16, &u16::MAX.to_le_bytes(), true), Some(1.0));
        assert_eq!(read_comp(DataType::I8, &[0x80], false), Some(-128.0));
        assert!(MORPH_WEIGHT_TYPES.contains(&DataType::I8) && MORPH_WEIGHT_TYPES.contains(&DataType::I16));
    }
}
