//! [`Credentials`]: the model key a provider was given (`api-key-env=`), kept so that every
//! error its calls return is scrubbed of it and a refused key names the variable it came
//! from. One per provider, whatever drives it.

use std::future::Future;

use crate::ir::ProviderDecl;
use crate::providers::env::{Environment, api_key, redact};
use crate::providers::{AgentReply, ProviderError, ProviderFuture, error_for_status};

/// A provider's key and where it came from. `Debug` never shows the key.
#[derive(Clone)]
pub(crate) struct Credentials {
    adapter: &'static str,
    /// The key, read from [`Credentials::variable`].
    key: Option<String>,
    /// The variable `api-key-env=` names.
    variable: Option<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("adapter", &self.adapter)
            .field("variable", &self.variable)
            .field("key", &self.key.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl Credentials {
    /// Reads the key from the variable `decl`'s `api-key-env=` names, if it names one.
    ///
    /// # Errors
    /// [`ProviderError::Config`]: the variable is named but unset or empty.
    pub(crate) fn from_decl(
        adapter: &'static str,
        decl: &ProviderDecl,
        env: &Environment,
    ) -> Result<Self, ProviderError> {
        let variable = decl.api_key_env.as_ref().map(|name| name.value.clone());
        let key = api_key(adapter, env, variable.as_deref())?;
        Ok(Self {
            adapter,
            key,
            variable,
        })
    }

    /// The key, if the provider was given one.
    pub(crate) fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// The variable the key came from (`api-key-env=`).
    pub(crate) fn variable(&self) -> Option<&str> {
        self.variable.as_deref()
    }

    /// `text` with the key replaced by `<redacted>`.
    pub(crate) fn scrub(&self, text: &str) -> String {
        match self.key.as_deref().filter(|key| !key.is_empty()) {
            Some(key) => text.replace(key, "<redacted>"),
            None => text.to_owned(),
        }
    }

    /// The error for a failure the backend reported with HTTP `status`, by the contract's
    /// table ([`error_for_status`]), the key scrubbed and its variable named.
    pub(crate) fn status_error(&self, status: u16, message: &str) -> ProviderError {
        error_for_status(
            self.adapter,
            status,
            self.scrub(message),
            self.variable(),
            None,
        )
    }

    /// Runs one call of the provider, every error it returns scrubbed of the key: a CLI's
    /// stderr or a server's answer may echo the key it was given.
    pub(crate) fn guard<'a, F>(&'a self, call: F) -> ProviderFuture<'a>
    where
        F: Future<Output = Result<AgentReply, ProviderError>> + Send + 'a,
    {
        Box::pin(async move {
            call.await.map_err(|error| {
                let mut error = redact(error, self.key.as_deref());
                // However the backend reported the refusal, the person is told which
                // variable held the key it refused.
                if let ProviderError::Auth { key_variable, .. } = &mut error
                    && key_variable.is_none()
                {
                    key_variable.clone_from(&self.variable);
                }
                error
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::registry::test_decl;
    use crate::source::{Span, Spanned};

    fn credentials() -> Credentials {
        let mut decl = test_decl("p", "codex");
        decl.api_key_env = Some(Spanned::new("MY_KEY".to_owned(), Span::default()));
        let env = Environment::default().with("MY_KEY", "sk-secret-7");
        Credentials::from_decl("codex", &decl, &env).expect("set")
    }

    #[tokio::test]
    async fn errors_lose_the_key_and_a_refusal_names_its_variable() {
        let credentials = credentials();
        let auth = credentials.status_error(401, "key sk-secret-7 is wrong");
        let text = auth.to_string();
        assert_eq!(auth.class().name(), "auth");
        assert!(
            text.contains("`MY_KEY`") && !text.contains("sk-secret-7"),
            "{text}"
        );
        let failed = credentials
            .guard(async {
                Err(ProviderError::process_exit(
                    "codex",
                    Some(1),
                    "bad key sk-secret-7",
                ))
            })
            .await
            .expect_err("fails");
        assert!(!failed.to_string().contains("sk-secret-7"), "{failed}");
        assert!(!format!("{credentials:?}").contains("sk-secret-7"));
    }

    #[test]
    fn an_unset_variable_is_a_configuration_error_naming_it() {
        let mut decl = test_decl("p", "codex");
        decl.api_key_env = Some(Spanned::new("NOPE".to_owned(), Span::default()));
        let error =
            Credentials::from_decl("codex", &decl, &Environment::default()).expect_err("unset");
        assert!(error.to_string().contains("`NOPE`"), "{error}");
    }
}
