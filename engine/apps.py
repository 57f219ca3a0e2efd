from django.apps import AppConfig


class EngineConfig(AppConfig):
    name = "engine"
    verbose_name = "Engine"

    def ready(self) -> None:
        from django.conf import settings

        from engine import dispatch, shell

        dispatch.set_eager_executor(shell.execute_stage)
        if settings.OFFLINE_WRITER_MEANING:  # the offline writer reads meaning with the retrieval model (loaded lazily)
            from knowledge.embed_cache import sentence_similarity
            from llm.providers import offline

            offline.set_sentence_similarity(sentence_similarity)
