//! Skeletons from skins: each skin's joints and their ancestors, parents, inverse bind matrices and
//! rest pose (the nodes' transforms), or one skeleton of the whole scene in a file without skins.

use super::accessors::{FLOAT, Want};
use super::{ImportedSkeleton, Importer, asset};
use crate::error::Result;
use crate::math::Transform;
use crate::skeleton::{JointDesc, MAX_JOINTS, Skeleton};
use glam::{Mat4, Quat, Vec3};
use gltf::accessor::Dimensions;
use std::collections::{BTreeSet, HashSet};

impl Importer<'_> {
    /// One skeleton per skin, or one skeleton of every scene node when the file has no skin.
    pub(super) fn skeletons(
        &mut self,
        nodes: &[gltf::Node<'_>],
        parent: &[Option<usize>],
        in_scene: &[bool],
    ) -> Result<Vec<ImportedSkeleton>> {
        let doc = self.doc;
        let node_count = doc.nodes().count();
        let mut skeletons: Vec<ImportedSkeleton> = Vec::new();
        if doc.skins().count() > 0 {
            for skin in doc.skins() {
                skeletons.push(self.skin_skeleton(&skin, nodes, parent, in_scene)?);
            }
        } else {
            let scene_nodes: Vec<usize> = (0..node_count).filter(|&i| in_scene[i]).collect();
            if !scene_nodes.is_empty() {
                let descs = self.joint_descs(&scene_nodes, nodes, parent, &|_| Mat4::IDENTITY)?;
                let name = doc
                    .default_scene()
                    .and_then(|s| s.name().map(str::to_string))
                    .unwrap_or_else(|| "scene".into());
                skeletons.push(self.make_skeleton(name, descs, &scene_nodes, None, Vec::new())?);
            }
        }
        Ok(skeletons)
    }

    fn node_transform(&mut self, node: &gltf::Node<'_>) -> Transform {
        let (t, r, s) = match node.transform() {
            gltf::scene::Transform::Matrix { matrix } => {
                let m = Mat4::from_cols_array_2d(&matrix);
                let (s, r, t) = m.to_scale_rotation_translation();
                (t, r, s)
            }
            gltf::scene::Transform::Decomposed {
                translation,
                rotation,
                scale,
            } => (Vec3::from(translation), Quat::from_array(rotation), Vec3::from(scale)),
        };
        let mut r = r;
        let len = r.length();
        if (len - 1.0).abs() > 1e-3 && len > 1e-6 && len.is_finite() {
            self.notes
                .push(format!("node {}: rotation of length {len} normalized", node.index()));
            r = r.normalize();
        }
        let mut s = s;
        if s.abs().min_element() < 1e-12 {
            self.notes
                .push(format!("node {}: zero scale component replaced by 1e-6", node.index()));
            s = Vec3::select(s.abs().cmplt(Vec3::splat(1e-12)), Vec3::splat(1e-6), s);
        }
        Transform::new(t, r, s)
    }

    /// Joint descriptions for `joint_nodes` (sorted node indices, closed under parents within the
    /// set), with unique names.
    fn joint_descs(
        &mut self,
        joint_nodes: &[usize],
        nodes: &[gltf::Node<'_>],
        parent: &[Option<usize>],
        ibm: &dyn Fn(usize) -> Mat4,
    ) -> Result<Vec<JointDesc>> {
        if joint_nodes.len() > MAX_JOINTS {
            return Err(self.err(format!(
                "a skeleton would have {} joints, more than the limit of {MAX_JOINTS}",
                joint_nodes.len()
            )));
        }
        let mut used: HashSet<String> = HashSet::new();
        let mut descs = Vec::with_capacity(joint_nodes.len());
        for &n in joint_nodes {
            let node = &nodes[n];
            let mut name = match node.name() {
                Some(s) if !s.is_empty() && !used.contains(s) => s.to_string(),
                _ => format!("node_{n}"),
            };
            while used.contains(&name) {
                name.push('_');
            }
            used.insert(name.clone());
            let p = parent[n].and_then(|p| joint_nodes.iter().position(|&x| x == p));
            descs.push(JointDesc {
                name,
                parent: p,
                rest: self.node_transform(node),
                inverse_bind: ibm(n),
            });
        }
        Ok(descs)
    }

    fn make_skeleton(
        &self,
        name: String,
        descs: Vec<JointDesc>,
        joint_nodes_in: &[usize],
        skin: Option<usize>,
        skin_nodes: Vec<usize>,
    ) -> Result<ImportedSkeleton> {
        let skeleton = Skeleton::new(name, descs).map_err(|e| asset(&self.file, e))?;
        let joint_nodes: Vec<usize> = skeleton.source_index().iter().map(|&i| joint_nodes_in[i]).collect();
        let skin_joints = skin_nodes
            .iter()
            .map(|n| joint_nodes.iter().position(|x| x == n).unwrap_or(0))
            .collect();
        Ok(ImportedSkeleton {
            skeleton,
            skin,
            skin_joints,
            joint_nodes,
            clips: Vec::new(),
        })
    }

    fn skin_skeleton(
        &mut self,
        skin: &gltf::Skin<'_>,
        nodes: &[gltf::Node<'_>],
        parent: &[Option<usize>],
        in_scene: &[bool],
    ) -> Result<ImportedSkeleton> {
        let si = skin.index();
        let skin_nodes: Vec<usize> = skin.joints().map(|n| n.index()).collect();
        if skin_nodes.is_empty() {
            return Err(self.err(format!("skin {si} has no joints")));
        }
        let mut seen = HashSet::new();
        for &n in &skin_nodes {
            if !in_scene.get(n).copied().unwrap_or(false) {
                return Err(self.err(format!("skin {si}: joint node {n} is not part of the scene")));
            }
            if !seen.insert(n) {
                return Err(self.err(format!("skin {si}: node {n} is listed twice as a joint")));
            }
        }
        let ibms: Vec<Mat4> = match skin.inverse_bind_matrices() {
            Some(acc) => {
                let d = self.read(
                    &acc,
                    &Want {
                        what: format!("skin {si} inverse bind matrices"),
                        dims: Dimensions::Mat4,
                        types: FLOAT,
                    },
                    true,
                )?;
                if d.len() / 16 < skin_nodes.len() {
                    return Err(self.err(format!(
                        "skin {si}: {} inverse bind matrices for {} joints",
                        d.len() / 16,
                        skin_nodes.len()
                    )));
                }
                d.chunks_exact(16)
                    .map(|c| {
                        let a: Vec<f32> = c.iter().map(|&x| x as f32).collect();
                        Mat4::from_cols_slice(&a)
                    })
                    .collect()
            }
            None => vec![Mat4::IDENTITY; skin_nodes.len()],
        };
        // The joints and all their ancestors.
        let mut set = BTreeSet::new();
        for &n in &skin_nodes {
            let mut cur = Some(n);
            while let Some(c) = cur {
                if !set.insert(c) {
                    break;
                }
                cur = parent[c];
            }
        }
        let joint_nodes: Vec<usize> = set.into_iter().collect();
        let added = joint_nodes.len() - skin_nodes.len();
        if added > 0 {
            self.notes.push(format!(
                "skin {si}: {added} ancestor node(s) of the joints added to the skeleton (identity inverse bind)"
            ));
        }
        let ibm = |n: usize| {
            skin_nodes
                .iter()
                .position(|&x| x == n)
                .and_then(|k| ibms.get(k).copied())
                .unwrap_or(Mat4::IDENTITY)
        };
        let descs = self.joint_descs(&joint_nodes, nodes, parent, &ibm)?;
        let name = skin.name().map(str::to_string).unwrap_or_else(|| format!("skin_{si}"));
        self.make_skeleton(name, descs, &joint_nodes, Some(si), skin_nodes)
    }
}
