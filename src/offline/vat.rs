//! Baking vertex animation textures ([`crate::vat`]): a mesh skinned by the CPU mirror at evenly
//! spaced frames of its clips, quantized, and measured against skinning.

use crate::cpu::{self, SkinnedPoint};
use crate::error::{Error, Result};
use crate::layout::BlendList;
use crate::library::{AnimationLibrary, ClipId, SkeletonId};
use crate::mesh::SkinnedMesh;
use crate::vat::{Vat, VatClip, VatReport, encode_vertex};
use glam::Vec3;

/// What [`bake_vat`] bakes.
#[derive(Clone, Debug, PartialEq)]
pub struct VatDesc {
    /// Frames per second (default 30): more frames, less error between them, more bytes.
    pub fps: f32,
    /// The clips to bake, all of the skeleton's; empty (the default) bakes every clip of it.
    pub clips: Vec<ClipId>,
}

impl Default for VatDesc {
    fn default() -> Self {
        Self {
            fps: 30.0,
            clips: Vec::new(),
        }
    }
}

/// Most frames of one bake (the GPU form indexes frames with 32-bit words).
pub const MAX_VAT_FRAMES: u32 = 1 << 20;

/// Bakes `mesh` skinned to `skeleton` over `desc.clips` at `desc.fps`: each frame's pose by the
/// CPU mirror ([`cpu::pose_at`]), the mesh's morph targets moved by the weights the clip drives
/// (as a character with no weights of its own shows them), then skinned ([`cpu::skin_morphed`]);
/// positions quantized in the box of every frame, normals octahedron-encoded. The report
/// ([`VatReport`]) compares playback with skinning at every frame and between frames.
/// `progress` is called after each clip with the clip's name and how many are done.
///
/// Errors: a skeleton or clip of another library ([`Error::ForeignId`]); a clip of another
/// skeleton, or none to bake ([`Error::Clip`] / [`Error::Mesh`]); `fps` not finite or not above
/// 0, or more than [`MAX_VAT_FRAMES`] frames ([`Error::Limit`]); a mesh that does not fit the
/// skeleton ([`SkinnedMesh::validate`]).
pub fn bake_vat(
    lib: &AnimationLibrary,
    skeleton: SkeletonId,
    mesh: &SkinnedMesh,
    desc: &VatDesc,
    mut progress: impl FnMut(&str, usize, usize),
) -> Result<Vat> {
    let k = skeleton.check(lib.tag())?;
    let joint_count = lib
        .gpu_skeletons()
        .get(k as usize)
        .ok_or_else(|| Error::Limit {
            what: format!("VAT of mesh '{}': skeleton {k} does not exist", mesh.name),
        })?
        .joint_count;
    let mut mesh = mesh.clone();
    mesh.validate(joint_count as usize)?;
    if !(desc.fps.is_finite() && desc.fps > 0.0) {
        return Err(Error::Limit {
            what: format!(
                "VAT of mesh '{}' at {} frames per second (must be above 0)",
                mesh.name, desc.fps
            ),
        });
    }
    let clips: Vec<ClipId> = if desc.clips.is_empty() {
        (0..lib.clips().len() as u32)
            .filter_map(|c| lib.clip_at(c))
            .filter(|&c| lib.clip_skeleton(c).is_ok_and(|s| s == skeleton))
            .collect()
    } else {
        desc.clips.clone()
    };
    if clips.is_empty() {
        return Err(Error::Mesh {
            mesh: mesh.name.clone(),
            what: "no clip of its skeleton to bake into a VAT".into(),
        });
    }
    let skin = Skinner::new(lib, &mesh)?;
    // Every clip's frames, skinned.
    let mut baked = Vec::new();
    let mut table = Vec::new();
    let mut first_frame = 0u64;
    for (done, &clip) in clips.iter().enumerate() {
        let index = clip.check(lib.tag())? as usize;
        let name = lib.clip_names().get(index).cloned().unwrap_or_default();
        if clips[..done].contains(&clip) {
            return Err(Error::Clip {
                clip: name,
                what: format!("is given twice to bake into the VAT of mesh '{}'", mesh.name),
            });
        }
        if lib.clip_skeleton(clip)? != skeleton {
            return Err(Error::Clip {
                clip: name,
                what: format!("is not of the skeleton mesh '{}' is baked to", mesh.name),
            });
        }
        let duration = lib.clip_duration(clip)?;
        let frame_count = if duration > 0.0 {
            ((f64::from(duration) * f64::from(desc.fps)).ceil() as u64 + 1).max(2)
        } else {
            1
        };
        if first_frame + frame_count > u64::from(MAX_VAT_FRAMES) {
            return Err(Error::Limit {
                what: format!(
                    "VAT of mesh '{}': clip '{name}' reaches frame {} at {} fps; at most {MAX_VAT_FRAMES}",
                    mesh.name,
                    first_frame + frame_count,
                    desc.fps
                ),
            });
        }
        for f in 0..frame_count {
            baked.push(skin.at(clip, frame_time(duration, f as u32, frame_count as u32))?);
        }
        table.push(VatClip {
            clip: clip.index(),
            name: name.clone(),
            first_frame: first_frame as u32,
            frame_count: frame_count as u32,
            duration,
        });
        first_frame += frame_count;
        progress(&name, done + 1, clips.len());
    }
    // The box of every frame; a step of at least a millionth of the box's size on each axis.
    let points = baked.iter().flatten().map(|p| p.position.truncate());
    let (min, max) = points.fold((Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)), |(lo, hi), p| {
        (lo.min(p), hi.max(p))
    });
    let size = (max - min)
        .max(Vec3::splat((max - min).max_element() * 1e-6))
        .max(Vec3::splat(1e-9));
    let step = size / 65535.0;
    let words = baked
        .iter()
        .flatten()
        .map(|p| encode_vertex(p.position.truncate(), p.normal.truncate(), min, step))
        .collect();
    let mut vat = Vat {
        mesh: mesh.name.clone(),
        skeleton: k,
        vertex_count: mesh.positions.len() as u32,
        fps: desc.fps,
        clips: table,
        box_min: min,
        box_step: step,
        words,
        report: VatReport::default(),
    };
    vat.report = measure(&vat, &skin)?;
    Ok(vat)
}

/// Time of frame `f` of a clip of `duration` seconds baked in `frame_count` frames.
fn frame_time(duration: f32, f: u32, frame_count: u32) -> f32 {
    if frame_count < 2 {
        0.0
    } else {
        duration * f as f32 / (frame_count - 1) as f32
    }
}

/// The mesh skinned by the CPU mirror at any time of a clip.
struct Skinner<'a> {
    lib: &'a AnimationLibrary,
    vertices: Vec<crate::SkinVertex>,
    morph: Option<crate::MorphSet>,
}

impl<'a> Skinner<'a> {
    fn new(lib: &'a AnimationLibrary, mesh: &SkinnedMesh) -> Result<Self> {
        let morph = if mesh.morph_targets.targets.is_empty() {
            None
        } else {
            Some(mesh.morph_targets.build(mesh.positions.len())?)
        };
        Ok(Self {
            lib,
            vertices: mesh.gpu_vertices(),
            morph,
        })
    }

    /// Every vertex skinned in clip `clip`'s pose at `time`.
    fn at(&self, clip: ClipId, time: f32) -> Result<Vec<SkinnedPoint>> {
        let pose = cpu::pose_at(self.lib, clip, time)?;
        match &self.morph {
            None => cpu::skin(&pose.palette, 0, &self.vertices),
            Some(set) => {
                let mut list = BlendList::default();
                cpu::add_sample(&mut list, clip.index(), time, 1.0, 0);
                let own = vec![0.0; set.target_count()];
                let weights = cpu::blend_morph_weights(self.lib, &list, &own, &[]);
                cpu::skin_morphed(&pose.palette, &[], 0, 0.0, set.words(), &weights, &self.vertices)
            }
        }
    }
}

/// Playback against skinning at every frame and [`VatReport::STEPS`] − 1 times between each two.
fn measure(vat: &Vat, skin: &Skinner<'_>) -> Result<VatReport> {
    let mut report = VatReport::default();
    let (mut sum, mut compared) = (0.0f64, 0u64);
    for c in &vat.clips {
        let clip = skin.lib.clip_at(c.clip).ok_or_else(|| Error::Clip {
            clip: c.name.clone(),
            what: "is not in the library".into(),
        })?;
        let steps = (c.frame_count - 1) * VatReport::STEPS;
        for s in 0..=steps {
            let time = if steps == 0 {
                0.0
            } else {
                c.duration * s as f32 / steps as f32
            };
            let skinned = skin.at(clip, time)?;
            for (v, want) in skinned.iter().enumerate() {
                let got = vat.vertex(c.clip, time, v as u32).unwrap_or_default();
                let d = (got.position - want.position).truncate().length();
                sum += f64::from(d);
                compared += 1;
                if d > report.max_position_error {
                    report.max_position_error = d;
                    report.worst = (c.clip, time);
                }
                let cos = got.normal.truncate().dot(want.normal.truncate()).clamp(-1.0, 1.0);
                report.max_normal_error_degrees = report.max_normal_error_degrees.max(cos.acos().to_degrees());
            }
            report.poses_checked += 1;
        }
    }
    report.mean_position_error = (sum / compared.max(1) as f64) as f32;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mannequin_bakes_within_millimetres_and_more_frames_err_less() {
        let (lib, skeleton, clips) = crate::mannequin::library();
        let mesh = crate::mannequin::mesh(&lib.skeletons()[0]);
        let walk = clips[0];
        let bake = |fps| {
            let desc = VatDesc { fps, clips: vec![walk] };
            bake_vat(&lib, skeleton, &mesh, &desc, |_, _, _| {}).unwrap()
        };
        let (coarse, fine) = (bake(10.0), bake(60.0));
        let (e10, e60) = (coarse.report.max_position_error, fine.report.max_position_error);
        assert!(e60 < e10, "60 fps errs {e60}, 10 fps {e10}");
        assert!(e60 < 0.01 && e60 > 0.0, "60 fps errs {e60} m");
        assert!(fine.report.max_normal_error_degrees < 10.0, "{:?}", fine.report);
        // Frames: ceil(duration × fps) + 1.
        let d = lib.clip_duration(walk).unwrap();
        assert_eq!(fine.clips[0].frame_count, (d * 60.0).ceil() as u32 + 1);
        assert_eq!(
            fine.words.len() as u32,
            fine.clips[0].frame_count * mesh.positions.len() as u32
        );
    }

    #[test]
    fn bad_requests_are_refused_by_name() {
        let (lib, skeleton, _) = crate::mannequin::library();
        let mesh = crate::mannequin::mesh(&lib.skeletons()[0]);
        let err = |desc: VatDesc| {
            bake_vat(&lib, skeleton, &mesh, &desc, |_, _, _| {})
                .unwrap_err()
                .to_string()
        };
        let e = err(VatDesc {
            fps: f32::NAN,
            ..VatDesc::default()
        });
        assert!(e.contains(&mesh.name) && e.contains("frames per second"), "{e}");
        let e = err(VatDesc {
            fps: 1e9,
            ..VatDesc::default()
        });
        assert!(e.contains("at most"), "{e}");
    }
}
