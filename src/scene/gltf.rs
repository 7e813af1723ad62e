//! The character of a glTF file: its skeleton, merged mesh and clips, scaled and placed from
//! its posed bounds.

use super::character::{Character, REFERENCE_FOOTPRINT, REFERENCE_HEIGHT};
use crate::error::{Error, Result};
use crate::mesh::SkinnedMesh;
use crate::offline::gltf_import::{self, Imported};
use glam::{Vec2, Vec3};
use std::path::Path;

impl Character {
    /// The character of a glTF file: its first skinned skeleton that has a mesh (or the rigid
    /// node hierarchy of an unskinned file), every mesh bound to it and all of its clips, played
    /// by equal shares of a crowd, in place.
    pub fn from_gltf(path: &Path) -> Result<Self> {
        Self::from_gltf_in(path, crate::offline::compress::ClipFormat::Raw)
    }

    /// As [`Character::from_gltf`], its clips in `format` (compressed with the default settings,
    /// glTF's metres for units).
    pub fn from_gltf_in(path: &Path, format: crate::offline::compress::ClipFormat) -> Result<Self> {
        let imported = gltf_import::load(path)?;
        let skeleton = Self::skeleton_of(&imported)?;
        let source = match format.settings() {
            Some(settings) => crate::offline::gltf_import::ClipSource::Compress(settings),
            None => crate::offline::gltf_import::ClipSource::Raw,
        };
        Self::from_imported_with(&imported, skeleton, &source)
    }

    /// The skeleton [`Character::from_gltf`] picks: the primary one (first skin, or the scene of an
    /// unskinned file) when a mesh is bound to it, else the first skeleton that has a mesh.
    pub fn skeleton_of(imported: &Imported) -> Result<usize> {
        let has_mesh = |s: usize| imported.meshes.iter().any(|m| m.skeleton == s);
        imported
            .primary_skeleton()
            .filter(|&s| has_mesh(s))
            .or_else(|| (0..imported.skeletons.len()).find(|&s| has_mesh(s)))
            .ok_or_else(|| Error::Asset {
                file: imported.file.clone(),
                what: "has no mesh to draw".into(),
            })
    }

    /// The character made of skeleton `skeleton` of an imported file: its clips in file order,
    /// every mesh bound to it merged into one, scaled and placed from the bounds of its pose at
    /// the start of its first clip.
    pub fn from_imported(imported: &Imported, skeleton: usize) -> Result<Self> {
        Self::from_imported_with(imported, skeleton, &crate::offline::gltf_import::ClipSource::Raw)
    }

    /// As [`Character::from_imported`], the clips from `source` (raw, compressed, or a
    /// compressed library file).
    pub fn from_imported_with(
        imported: &Imported,
        skeleton: usize,
        source: &crate::offline::gltf_import::ClipSource,
    ) -> Result<Self> {
        let err = |what: String| Error::Asset {
            file: imported.file.clone(),
            what,
        };
        let s = imported
            .skeletons
            .get(skeleton)
            .ok_or_else(|| err(format!("has no skeleton {skeleton}")))?;
        if s.clips.is_empty() {
            return Err(err(format!(
                "skeleton '{}' has no animation to play",
                s.skeleton.name()
            )));
        }
        let lib = imported.build_library_with(source)?;
        let mut mesh = SkinnedMesh {
            name: Path::new(&imported.file)
                .file_name()
                .map_or_else(|| imported.file.clone(), |f| f.to_string_lossy().into_owned()),
            ..Default::default()
        };
        for m in imported.meshes.iter().filter(|m| m.skeleton == skeleton) {
            let base = u32::try_from(mesh.positions.len()).map_err(|_| err("too many vertices".into()))?;
            let n = m.mesh.positions.len();
            mesh.positions.extend_from_slice(&m.mesh.positions);
            mesh.normals
                .extend((0..n).map(|v| m.mesh.normals.get(v).copied().unwrap_or(Vec3::Y)));
            mesh.uvs
                .extend((0..n).map(|v| m.mesh.uvs.get(v).copied().unwrap_or(Vec2::ZERO)));
            mesh.joints.extend_from_slice(&m.mesh.joints);
            mesh.weights.extend_from_slice(&m.mesh.weights);
            mesh.indices.extend(m.mesh.indices.iter().map(|i| i + base));
        }
        if mesh.positions.is_empty() {
            return Err(err(format!("no mesh is bound to skeleton '{}'", s.skeleton.name())));
        }
        mesh.validate(s.skeleton.joint_count())
            .map_err(|e| err(e.to_string()))?;
        let n = s.clips.len();
        let mut c = Self {
            name: mesh.name.clone(),
            library: lib.library,
            skeleton: lib.skeletons[skeleton],
            mesh,
            clips: lib.clips[skeleton].clone(),
            clip_names: s.clips.iter().map(|c| c.clip.name.clone()).collect(),
            clip_shares: (1..=n)
                .map(|k| if k == n { 1.0 } else { k as f32 / n as f32 })
                .collect(),
            velocities: vec![Vec2::ZERO; n],
            scale: 1.0,
            origin: Vec3::ZERO,
            relative_footprint: 1.0,
            relative_height: 1.0,
            locomotion: None,
            layers: None,
            prop: None,
            footprints: None,
            root_motion: false,
            ik: None,
            machine: None,
        };
        let (lo, hi) = c.posed_bounds(c.clips[0], 0.0)?;
        let size = hi - lo;
        let largest = size.max_element();
        if largest.is_finite() && largest > 0.0 {
            c.scale = 10f32.powf(-(largest / 2.0).log10().round());
        }
        c.origin = Vec3::new((lo.x + hi.x) * 0.5, lo.y, (lo.z + hi.z) * 0.5);
        // The mean of the two horizontal sides: a long, narrow animal needs less room than its
        // length, a wide one less than its width.
        c.relative_footprint = ((size.x + size.z) * 0.5 * c.scale / REFERENCE_FOOTPRINT).clamp(0.25, 100.0);
        c.relative_height = (size.y * c.scale / REFERENCE_HEIGHT).clamp(0.1, 100.0);
        if !c.origin.is_finite() {
            c.origin = Vec3::ZERO;
        }
        Ok(c)
    }
}
