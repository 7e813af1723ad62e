//! `wgpu-anim inspect`: what a glTF file holds.

use crate::load;
use std::path::Path;
use wgpu_anim::Interpolation;
use wgpu_anim::offline::gltf_import::ChannelPath;

fn interp_name(i: Interpolation) -> &'static str {
    match i {
        Interpolation::Step => "STEP",
        Interpolation::Linear => "LINEAR",
        Interpolation::CubicSpline => "CUBICSPLINE",
    }
}

pub(crate) fn inspect(file: &Path) -> Result<(), String> {
    let imp = load(file)?;
    outln!("file: {}", file.display());
    for (si, s) in imp.skeletons.iter().enumerate() {
        let sk = &s.skeleton;
        match s.skin {
            Some(skin) => outln!(
                "skeleton {si} '{}': skin {skin}, {} joints ({} skin joints, {} ancestors)",
                sk.name(),
                sk.joint_count(),
                s.skin_joints.len(),
                sk.joint_count() - s.skin_joints.len()
            ),
            None => outln!(
                "skeleton {si} '{}': rigid node hierarchy, {} joints",
                sk.name(),
                sk.joint_count()
            ),
        }
        outln!("  {}", hierarchy_levels(sk));
        let depths = sk.depths();
        for (j, depth) in depths.iter().enumerate() {
            let skin_index = s.skin_joints.iter().position(|&x| x == j);
            outln!(
                "  {}{} (node {}{})",
                "  ".repeat(*depth as usize),
                sk.joint_names()[j],
                s.joint_nodes[j],
                skin_index.map_or(String::new(), |k| format!(", skin joint {k}"))
            );
        }
        if s.clips.is_empty() {
            outln!("  no clips");
        }
        for c in &s.clips {
            let info = &imp.animations[c.animation];
            let imported: Vec<_> = info.channels.iter().filter(|ch| ch.imported).collect();
            outln!(
                "  clip '{}' (animation {}): {:.4} s, {} joint tracks, {} channels",
                c.clip.name,
                c.animation,
                c.clip.duration,
                c.clip.tracks.len(),
                imported.len()
            );
        }
    }
    outln!("animations: {}", imp.animations.len());
    for (ai, a) in imp.animations.iter().enumerate() {
        outln!(
            "  {ai} '{}': keys {:.4}..{:.4} s, {} channels",
            a.name,
            a.first_key,
            a.duration,
            a.channels.len()
        );
        // Group channels by (path, interpolation): count and key range.
        let mut groups: Vec<(ChannelPath, Interpolation, usize, usize, usize, usize)> = Vec::new();
        for ch in &a.channels {
            match groups.iter_mut().find(|g| g.0 == ch.path && g.1 == ch.interpolation) {
                Some(g) => {
                    g.2 += 1;
                    g.3 = g.3.min(ch.keys);
                    g.4 = g.4.max(ch.keys);
                    g.5 += usize::from(!ch.imported);
                }
                None => groups.push((
                    ch.path,
                    ch.interpolation,
                    1,
                    ch.keys,
                    ch.keys,
                    usize::from(!ch.imported),
                )),
            }
        }
        for (path, interp, n, lo, hi, skipped) in groups {
            let keys = if lo == hi {
                format!("{lo} keys")
            } else {
                format!("{lo}..{hi} keys")
            };
            let skipped = if skipped > 0 {
                format!(", {skipped} not applied")
            } else {
                String::new()
            };
            outln!("    {n} × {path} {}, {keys}{skipped}", interp_name(interp));
        }
    }
    outln!("meshes: {}", imp.meshes.len());
    for m in &imp.meshes {
        outln!(
            "  mesh {} primitive {} '{}' on node {} → skeleton {}: {} vertices, {} triangles, up to {} influences per vertex{}",
            m.mesh_index,
            m.primitive,
            m.mesh.name,
            m.node,
            m.skeleton,
            m.mesh.positions.len(),
            m.mesh.indices.len() / 3,
            m.max_influences,
            if m.mesh.morph_targets.targets.is_empty() {
                String::new()
            } else {
                format!(", {} morph targets", m.mesh.morph_targets.targets.len())
            }
        );
    }
    let morphs: usize = imp.meshes.iter().map(|m| m.mesh.morph_targets.targets.len()).sum();
    outln!("morph targets: {morphs}");
    outln!("notes: {}", imp.notes.len());
    for n in &imp.notes {
        outln!("  - {n}");
    }
    Ok(())
}

/// The levels of `skeleton`'s hierarchy as the fused pass walks them: a step per level, a thread
/// per joint of the level (64 to a workgroup), and the share of the steps' threads busy.
fn hierarchy_levels(skeleton: &wgpu_anim::Skeleton) -> String {
    let lanes = wgpu_anim::layout::WORKGROUP_SIZE;
    let widths = skeleton.level_widths();
    let steps: u32 = widths.iter().map(|w| w.div_ceil(lanes)).sum();
    let busy = 100.0 * skeleton.joint_count() as f64 / f64::from((steps * lanes).max(1));
    let fused = if skeleton.joint_count() > wgpu_anim::layout::MAX_FUSED_JOINTS as usize {
        format!(
            "; more than the fused path's {} joints: staged only",
            wgpu_anim::layout::MAX_FUSED_JOINTS
        )
    } else {
        String::new()
    };
    format!(
        "hierarchy: {} levels, widest {} joints; the fused pass walks it in {steps} steps of {lanes} threads, {busy:.1} % of them busy{fused}",
        widths.len(),
        widths.iter().max().unwrap_or(&0),
    )
}
