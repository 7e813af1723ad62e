//! `wgpu-anim retarget`: every clip of one character played by another, written as `.glb`.

use crate::RetargetArgs;
use std::path::Path;
use wgpu_anim::offline::retarget::{BoneMap, RetargetOptions, Retargeter, humanoid_feet};
use wgpu_anim::offline::{gltf_export, gltf_import};
use wgpu_anim::{Clip, Skeleton, SkinnedMesh};

/// A character: its skeleton, the joints its skins bind, its skinned meshes and its clips.
struct Character {
    skeleton: Skeleton,
    skinned: Option<Vec<usize>>,
    meshes: Vec<SkinnedMesh>,
    clips: Vec<Clip>,
}

/// `mannequin` (the built-in one) or a glTF file's first skeleton with its meshes and clips.
fn character(spec: &Path) -> Result<Character, String> {
    if spec == Path::new("mannequin") {
        let skeleton = wgpu_anim::mannequin::skeleton();
        let meshes = vec![wgpu_anim::mannequin::mesh(&skeleton)];
        let clips = wgpu_anim::mannequin::clips(&skeleton);
        return Ok(Character {
            skeleton,
            skinned: None,
            meshes,
            clips,
        });
    }
    let imported = gltf_import::load(spec).map_err(|e| e.to_string())?;
    let s = imported
        .primary_skeleton()
        .ok_or_else(|| format!("{}: no skeleton to retarget", spec.display()))?;
    let sk = &imported.skeletons[s];
    let meshes = imported
        .meshes
        .iter()
        .filter(|m| m.skeleton == s)
        .map(|m| m.mesh.clone())
        .collect();
    let skinned = (!sk.skin_joints.is_empty()).then(|| sk.skin_joints.clone());
    Ok(Character {
        skeleton: sk.skeleton.clone(),
        skinned,
        meshes,
        clips: sk.clips.iter().map(|c| c.clip.clone()).collect(),
    })
}

pub(crate) fn retarget(a: &RetargetArgs) -> Result<(), String> {
    let source = character(&a.source)?;
    let target = character(&a.to)?;
    let mut map = if a.by_name {
        BoneMap::by_name(&source.skeleton, &target.skeleton)
    } else {
        BoneMap::humanoid(&source.skeleton, &target.skeleton).map_err(|e| e.to_string())?
    };
    if let Some(path) = &a.map {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        map.apply_json(&path.display().to_string(), &text)
            .map_err(|e| e.to_string())?;
    }
    let mut options = RetargetOptions::default();
    options.source_skinned = source.skinned.clone();
    options.target_skinned = target.skinned.clone();
    if a.bind_rest {
        options = options.with_source_bind_rest().with_target_bind_rest();
    }
    if a.feet {
        let feet = humanoid_feet(&target.skeleton).ok_or_else(|| {
            format!(
                "--feet: '{}' has no feet the humanoid profile knows (Mixamo, CMU or mannequin names)",
                target.skeleton.name()
            )
        })?;
        for foot in &feet {
            options = options.with_goal(foot);
        }
        outln!("foot goals on {} and {}", feet[0], feet[1]);
    }
    let r = Retargeter::new(&source.skeleton, &target.skeleton, &map, &options).map_err(|e| e.to_string())?;
    let (root, source_root) = r.retarget_root();
    outln!(
        "{} joints of '{}' driven by '{}'; retarget root {} <- {}; hip-height ratio {:.4}",
        map.len(),
        target.skeleton.name(),
        source.skeleton.name(),
        target.skeleton.joint_names()[root],
        source.skeleton.joint_names()[source_root],
        r.height_ratio()
    );
    let mut clips = Vec::with_capacity(source.clips.len());
    for clip in &source.clips {
        let started = std::time::Instant::now();
        let out = r.retarget(clip).map_err(|e| e.to_string())?;
        let keys = out
            .tracks
            .first()
            .and_then(|t| t.rotation.as_ref())
            .map_or(0, |t| t.times.len());
        outln!(
            "clip '{}': {:.3} s, {} tracks of {keys} keys, {:.0} ms",
            out.name,
            out.duration,
            out.tracks.len(),
            started.elapsed().as_secs_f64() * 1e3
        );
        clips.push(out);
    }
    gltf_export::write_glb(&a.out, &target.skeleton, &target.meshes, &clips).map_err(|e| e.to_string())?;
    outln!(
        "wrote {} ({} meshes, {} clips)",
        a.out.display(),
        target.meshes.len(),
        clips.len()
    );
    Ok(())
}
