from django.apps import AppConfig


class EngineConfig(AppConfig):
    name = "engine"
    verbose_name = "Engine"

    def ready(self) -> None:
        from engine import dispatch, shell

        dispatch.set_eager_executor(shell.execute_stage)
