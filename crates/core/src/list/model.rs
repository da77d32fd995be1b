//! [`Blocklist`]: a list held in memory — metadata, engine, resolver — with its accessors and
//! the checks of its own consistency; asking it about items is `check`'s.

use std::path::{Path, PathBuf};

use phishbloom_filter::AnyFilter;

use crate::engine::cabf::CabfEngine;
use crate::engine::urls::UrlFilter;
use crate::error::{Error, Result};
use crate::format::Directory;
use crate::keys::KeyScheme;
use crate::keywords::KeywordEngine;
use crate::kind::Kind;
use crate::near::NearEngine;
use crate::resolve::{Category, Resolver, Verification};
use crate::sections::Meta;
use crate::structure::Layers;

/// The structure that answers queries.
pub enum Engine {
    /// Whole keys (exact or URL-normalized) in the list's structure.
    Keys(Layers),
    /// URL entries in the list's structure, probed with every lookup expression.
    Urls(UrlFilter),
    /// URL entries in CaBF.
    Cabf(CabfEngine),
    /// Keywords and phrases, found inside text by `scan`.
    Keywords(KeywordEngine),
    /// Known documents by SimHash: near-copies found by `scan`.
    Near(NearEngine),
}

/// A blocklist: metadata, the engine, and what turns its hits into verdicts (verification
/// table, categories, exceptions).
pub struct Blocklist {
    pub(super) kind: Kind,
    pub(super) meta: Meta,
    pub(super) engine: Engine,
    pub(super) resolver: Resolver,
    pub(super) directory: Option<Directory>,
    /// The file it was read from (its name for a list built in memory), for messages.
    pub(super) origin: PathBuf,
}

impl Blocklist {
    /// The structure.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The metadata.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The host gate of a list of URL entries, if it has one ([`crate::engine::gate`]).
    pub fn url_gate(&self) -> Option<&crate::engine::gate::HostGate> {
        match &self.engine {
            Engine::Urls(urls) => urls.gate(),
            _ => None,
        }
    }

    /// The verification table, if the blocklist has one.
    pub fn verification(&self) -> Option<&Verification> {
        self.resolver.verification()
    }

    /// What turns hits into verdicts: categories, verification, exceptions.
    pub fn resolver(&self) -> &Resolver {
        &self.resolver
    }

    /// The list's categories.
    pub fn categories(&self) -> &[Category] {
        self.resolver.categories()
    }

    /// Answers only for entries of the named categories from now on; an unknown name is an
    /// error listing the list's categories. `path` names the file in that error.
    pub fn keep_categories(&mut self, names: &[String], path: &Path) -> Result<()> {
        let ids = self.resolver.category_ids(names, path)?;
        self.resolver.set_filter(ids);
        Ok(())
    }

    /// The file's header and section table, for a blocklist read from a file.
    pub fn directory(&self) -> Option<&Directory> {
        self.directory.as_ref()
    }

    /// The per-checked-item false-positive rate implied by the filter's per-probe target at
    /// the probes per item it was sized for.
    pub fn per_item_target(&self) -> Option<f64> {
        self.meta.target_fpp
    }

    /// The single Bloom filter of a classic, blocked or split blocklist that does not grow (`None`
    /// for the other kinds).
    pub fn filter(&self) -> Option<&AnyFilter> {
        match &self.engine {
            Engine::Keywords(engine) => Some(engine.filter()),
            Engine::Near(_) => None,
            _ => self.layers().and_then(Layers::single_bloom),
        }
    }

    /// Verifies the parts opening leaves to be checked when first read — the blocks of a
    /// keyword index, which a scan reads only on hits — so that a file said to be verified is
    /// verified whole (`info`).
    pub fn verify_all(&self) -> Result<()> {
        if let Engine::Keywords(engine) = self.engine() {
            if let Some(index) = engine.index() {
                index.verify()?;
            }
        }
        Ok(())
    }

    /// Refuses a list that does not answer `check`: a keyword list finds its phrases inside
    /// text (`scan`); checked as whole items it would answer only for lines that are exactly a
    /// keyword, and clean for any text that contains one.
    pub fn require_checkable(&self) -> Result<()> {
        match self.meta().scheme {
            KeyScheme::Keywords => Err(Error::KeywordList {
                path: self.origin(),
            }),
            KeyScheme::Near => Err(Error::NearList {
                path: self.origin(),
            }),
            _ => Ok(()),
        }
    }

    /// Refuses a list without a verification section (or a compact table, which confirms as
    /// one does), for a caller that wants every hit confirmed exactly.
    pub fn require_verification(&self) -> Result<()> {
        match self.resolver.confirms() {
            true => Ok(()),
            false => Err(Error::NoVerification {
                path: self.origin(),
            }),
        }
    }
}
